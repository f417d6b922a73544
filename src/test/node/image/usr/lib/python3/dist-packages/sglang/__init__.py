"""Stands in for SGLang in the real node's engine images: only its launch_server module, which starts the fake engine."""
