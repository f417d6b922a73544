"""A real engine's server as it runs in a Pod of the test world's cluster.

A real Pod's engine listens on every address of its own network namespace (the rendered --host 0.0.0.0), so the
drain hook and the member reads reach it on 127.0.0.1 while clients reach it on the Pod's address. Here the Pods
share one machine: the engine listens on the Pod's address, which its own --host gives, and also on the address that
stands for the Pod's loopback, given as the first argument. The engine's module and its command line follow.

Usage: serve-in-pod.py <loopback stand-in> <module> [argument ...]
  e.g. serve-in-pod.py 127.1.0.4 vllm.entrypoints.cli.main serve /models/tiny --host 10.244.0.4 --port 8000
       serve-in-pod.py 127.1.0.5 sglang.launch_server --model-path /models/tiny --host 10.244.0.5 --port 8000
"""
import runpy
import socket
import sys

import uvicorn

serve = uvicorn.Server.serve


def serve_on(loopback):
    async def serve_on_both(self, sockets=None):
        # vLLM binds its socket itself and hands it over; SGLang leaves uvicorn to bind the one its config names
        sockets = list(sockets) if sockets else [self.config.bind_socket()]
        extra = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        extra.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        extra.bind((loopback, sockets[0].getsockname()[1]))
        return await serve(self, sockets=[*sockets, extra])

    return serve_on_both


# both engines start helpers with multiprocessing's spawn, which imports this file again in each child
if __name__ == "__main__":
    uvicorn.Server.serve = serve_on(sys.argv[1])
    module = sys.argv[2]
    sys.argv = [module, *sys.argv[3:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
