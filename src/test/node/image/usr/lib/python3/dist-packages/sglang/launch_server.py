"""`python3 -m sglang.launch_server ...` in the real node's engine images: replaces itself with the test world's fake
engine, given the whole command line, so that the kubelet's signals reach it as they would reach SGLang."""
import os
import sys

os.execvp("java", ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
                   # an idle keep-alive connection closed after 5 s, as by uvicorn's default timeout_keep_alive
                   "-Dsun.net.httpserver.idleInterval=5",
                   "-cp", "/opt/ebb/classes:/opt/ebb/test-classes", "dev.ebb.operator.sim.EngineProgram",
                   os.environ["ENGINE_IMAGE"], "python3", "-m", "sglang.launch_server", *sys.argv[1:]])
