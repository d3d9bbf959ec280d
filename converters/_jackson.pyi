# JsonConverter's compiled writer (native/jackson/src/lib.rs).
from typing import Any

def dumps(tree: Any) -> bytes: ...
