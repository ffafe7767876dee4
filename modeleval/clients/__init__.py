"""Talking to models: the adapters that turn a request into an output (adapters.py), the OpenAI-compatible
endpoint's requests in flight (endpoint_client.py), which secrets a model may carry to which hosts
(secrets.py), the judge a 3DSRBench run asks (judge.py), and the model-calling facade other stages use
through modeleval.services: one prompt to a language model, a scene's pictures (calling.py)."""
