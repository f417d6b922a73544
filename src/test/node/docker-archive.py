"""Writes a container image as `docker save` does, from directories on this machine, so that containerd imports it
under the names given without any registry: one layer per directory (its files at the image's root), a config with
the entrypoint and environment, and a manifest naming every tag.

Usage: docker-archive.py <out.tar> --tag NAME [--tag NAME ...] [--entrypoint JSON] [--env K=V ...] <dir> [<dir> ...]
"""
import argparse
import hashlib
import io
import json
import os
import tarfile
import tempfile


def layer(directory, into):
    """The directory's tree as an uncompressed tar, owned by root and dated 0 so that equal trees give equal layers."""
    def normalise(info):
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        info.mtime = 0
        return info

    path = os.path.join(into, "layer-%d.tar" % len(os.listdir(into)))
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(os.listdir(directory)):
            tar.add(os.path.join(directory, name), arcname=name, filter=normalise)
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return path, "sha256:" + digest.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--tag", action="append", required=True)
    parser.add_argument("--entrypoint", default="null")
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(args.out))) as work:
        layers = [layer(d, work) for d in args.dirs]
        config = json.dumps({
            "architecture": "amd64", "os": "linux",
            "config": {"Entrypoint": json.loads(args.entrypoint), "Env": ["PATH=/usr/local/bin:/usr/bin:/bin"] + args.env},
            "rootfs": {"type": "layers", "diff_ids": [digest for _, digest in layers]},
        }, sort_keys=True).encode()
        config_name = hashlib.sha256(config).hexdigest() + ".json"
        manifest = json.dumps([{"Config": config_name, "RepoTags": args.tag,
                                "Layers": [os.path.basename(path) for path, _ in layers]}]).encode()
        partial = args.out + ".partial"
        with tarfile.open(partial, "w") as tar:
            for name, data in ((config_name, config), ("manifest.json", manifest)):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            for path, _ in layers:
                tar.add(path, arcname=os.path.basename(path))
        os.replace(partial, args.out)


if __name__ == "__main__":
    main()
