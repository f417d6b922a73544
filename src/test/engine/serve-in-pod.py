"""`vllm serve` as it runs in a Pod of the test world's cluster.

A real Pod's engine listens on every address of its own network namespace (the rendered --host 0.0.0.0), so the
drain hook and the member reads reach it on 127.0.0.1 while clients reach it on the Pod's address. Here the Pods
share one machine: the engine listens on the Pod's address, which --host gives, and also on the address that stands
for the Pod's loopback, given as the first argument. Everything after it is vLLM's own command line.

Usage: serve-in-pod.py <loopback stand-in> serve <model> [flag ...]
"""
import socket
import sys

import uvicorn

serve = uvicorn.Server.serve


def serve_on(loopback):
    async def serve_on_both(self, sockets=None):
        # vLLM binds its one socket itself and hands it to uvicorn; the second one joins it on the same port
        if sockets:
            extra = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            extra.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            extra.bind((loopback, sockets[0].getsockname()[1]))
            sockets = [*sockets, extra]
        return await serve(self, sockets=sockets)

    return serve_on_both


# vLLM starts its engine core with multiprocessing's spawn, which imports this file again in the child
if __name__ == "__main__":
    uvicorn.Server.serve = serve_on(sys.argv.pop(1))
    from vllm.entrypoints.cli.main import main

    sys.argv[0] = "vllm"
    sys.exit(main())
