"""Test helpers for code that calls LLMs: a real HTTP server on loopback that speaks the provider APIs.

```python
from helix.models import open_model
from helix.models.testing import ScriptedLLMServer, ScriptedReply

async with ScriptedLLMServer(script=[ScriptedReply(status=429, retry_after=0), "hello"]) as srv:
    model = open_model(srv.spec("openai/gpt-4o-2024-08-06"))
    print((await model.complete([{"role": "user", "content": "hi"}])).text)
```
"""

from ._loopback import RateLimit, RecordedRequest, Responder, ScriptedLLMServer, ScriptedReply

__all__ = ["RateLimit", "RecordedRequest", "Responder", "ScriptedLLMServer", "ScriptedReply"]
