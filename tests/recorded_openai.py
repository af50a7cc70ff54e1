"""Recorded exchanges with a real OpenAI-compatible server, and a server that plays them back.

``RecordingProxy`` sits on 127.0.0.1 between the product and a real server (llama.cpp's,
in ``bench/real_model.py``): it forwards every request, returns the server's answer as it
came (errors and malformed answers included) and keeps one compact record per exchange.
``ReplayServer`` answers from those records, so the client meets the real server's answers
in a test that needs no model.

A record (one JSON line) holds what identifies the request (path, the prompt's task
marker, a hash of the whole body, and the fields that decide what a server does with it:
model, structured mode, ``max_tokens``, the roles of the messages) and the answer: HTTP
status, seconds, and the body (JSON when it was JSON, else the text); a streamed answer (``streamed``) is
kept as its text, finish reason and usage, and streamed again on replay.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_TASK = re.compile(r"\[task: ([a-z_]+)\]")

CORPUS_NAME = "harbour"
CHAT_MODEL, EMBEDDING_MODEL = "local-chat", "local-embed"
# The product's settings for a one-slot local server, as the recording was made with
# them: requests made with other models or modes would not be the recorded ones.
ONE_SLOT_SERVER = {
    "GRAPHRAG_LLM_MODEL": CHAT_MODEL,
    "GRAPHRAG_EMBEDDING_MODEL": EMBEDDING_MODEL,
    "GRAPHRAG_LLM_CONCURRENCY": "1",  # the server decodes one request at a time
    "GRAPHRAG_EMBEDDING_CONCURRENCY": "1",
    "GRAPHRAG_LLM_TIMEOUT": "900",  # a queued or long answer must not time out and be sent again
    # Completion caps well inside the 2048-token context: the defaults (4096 for an
    # extraction) let a runaway answer fill the whole context, a minute of the only slot,
    # and leave its re-ask (prompt, cut-off answer, error) no room. A good answer of this
    # model on these short texts takes a few hundred tokens.
    "GRAPHRAG_LLM_EXTRACTION_MAX_TOKENS": "512",
    "GRAPHRAG_LLM_SUMMARY_MAX_TOKENS": "256",
    "GRAPHRAG_LLM_REPORT_MAX_TOKENS": "512",
    "GRAPHRAG_LLM_QUERY_MAX_TOKENS": "512",
}

# One question per query mode, asked of the recorded index.
QUESTIONS = {
    "global": "What are the main themes of these documents?",
    "local": "Who is Ingrid Marlow and what did she do?",
    "drift": "How are the Kelsey Harbour Trust and the Tidewater Bank connected?",
    "basic": "What did Thomas Quill record?",
}


def request_key(body: dict) -> str:
    """The same request, byte for byte after canonical JSON, has the same key."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def task_of(body: dict) -> str | None:
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    match = _TASK.search(prompt)
    return match.group(1) if match else None


def structured_mode(body: dict) -> str:
    """How the request asks for structure: a forced tool call, a response format, or none."""
    if body.get("tools"):
        return "tools"
    return (body.get("response_format") or {}).get("type", "text")


def request_fields(path: str, body: dict) -> dict:
    fields = {"path": path, "task": task_of(body), "key": request_key(body), "model": body.get("model")}
    if "messages" in body:
        fields |= {
            "mode": structured_mode(body),
            "stream": bool(body.get("stream")),
            "max_tokens": body.get("max_tokens"),
            "roles": [m.get("role") for m in body["messages"]],
            # A re-ask echoes the assistant's turn: what it sent as content is what some
            # servers refuse (null).
            "assistant_content": [m.get("content") for m in body["messages"] if m.get("role") == "assistant"],
        }
    else:
        inputs = body.get("input")
        fields["inputs"] = len(inputs) if isinstance(inputs, list) else 1
    return fields


def _stream_summary(raw: str) -> dict:
    """A Server-Sent Events answer as its text, finish reason and usage."""
    content, finish, usage = [], None, None
    for line in raw.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            content.append((choice.get("delta") or {}).get("content") or "")
            finish = choice.get("finish_reason") or finish
    return {"content": "".join(content), "finish_reason": finish, "usage": usage}


def _body_of(raw: bytes):
    text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _embeddings_summary(body):
    """Embedding vectors are long: kept as their shapes (a flat vector or a list of them)
    and the first values, enough to replay an answer of the same shape."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return body
    data = []
    for item in body["data"]:
        vector = item.get("embedding")
        if isinstance(vector, str):  # base64 float32, as OpenAI sends when asked
            raw = base64.b64decode(vector)
            vector = list(struct.unpack(f"<{len(raw) // 4}f", raw))
        nested = isinstance(vector, list) and bool(vector) and isinstance(vector[0], list)
        shape = [len(vector), len(vector[0])] if nested else [len(vector or [])]
        data.append({"index": item.get("index"), "shape": shape, "head": (vector[0] if nested else vector)[:4]})
    return body | {"data": data}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self) -> dict:
        length = int(self.headers.get("Content-Length", 0))
        return json.loads(self.rfile.read(length) or b"{}")


class _Loopback:
    """A server on 127.0.0.1, on a free port, until the ``with`` block ends."""

    def _serve(self, handler: type[_Handler]):
        self._server = _Server(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


@dataclass
class RecordingProxy(_Loopback):
    """Forwards to ``upstream`` (a base URL without ``/v1``) and records each exchange, as
    it ends, in ``path`` (a run stopped half-way keeps what it exchanged)."""

    upstream: str
    path: Path
    timeout_seconds: float = 1800.0
    records: list[dict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> RecordingProxy:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        proxy = self

        class Handler(_Handler):
            def do_POST(self):
                proxy._forward(self, self.read_body())

            def do_GET(self):
                proxy._forward(self, None)

        return self._serve(Handler)

    def _forward(self, handler: _Handler, body: dict | None) -> None:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.upstream + handler.path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as answer:
                status, content_type, raw = answer.status, answer.headers.get("Content-Type", ""), answer.read()
        except urllib.error.HTTPError as error:
            status, content_type, raw = error.code, error.headers.get("Content-Type", ""), error.read()
        except OSError as error:  # no answer at all: the product sees the connection drop
            self._record(handler.path, body, {"status": None, "error": repr(error)}, started)
            handler.close_connection = True
            return
        handler.send(status, raw, content_type or "application/json")
        answer = {"status": status}
        if "text/event-stream" in content_type:
            answer["streamed"] = _stream_summary(raw.decode("utf-8", "replace"))
        elif handler.path.endswith("/embeddings"):
            answer["body"] = _embeddings_summary(_body_of(raw))
        else:
            answer["body"] = _body_of(raw)
        self._record(handler.path, body, answer, started)

    def _record(self, path: str, body: dict | None, answer: dict, started: float) -> None:
        record = request_fields(path, body or {}) | answer | {"seconds": round(time.monotonic() - started, 2)}
        with self._lock:
            self.records.append(record)
            with self.path.open("a") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass
class ReplayServer(_Loopback):
    """Answers each request with a recorded answer: the answers of the same request (by
    key) in the order they were recorded, the last one again once they run out (a retry of
    a request the server refused gets the same refusal). A request never recorded (the
    product's prompts changed since) gets the next unused answer recorded for its path and
    task, so a test still meets the real server's kinds of answer; ``unmatched`` counts them."""

    records: list[dict]
    served: list[dict] = field(default_factory=list)
    unmatched: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _by_key: dict = field(default_factory=dict)
    _by_task: dict = field(default_factory=dict)
    _used: set = field(default_factory=set)

    def __enter__(self) -> ReplayServer:
        by_key, by_task = defaultdict(list), defaultdict(deque)
        for number, record in enumerate(self.records):
            by_key[record["key"]].append(number)
            by_task[(record["path"], record["task"])].append(number)
        self._by_key, self._by_task = dict(by_key), dict(by_task)
        replay = self

        class Handler(_Handler):
            def do_POST(self):
                replay._answer(self, self.read_body())

        return self._serve(Handler)

    def _pick(self, path: str, body: dict) -> int | None:
        with self._lock:
            same = self._by_key.get(request_key(body))
            if same:
                unused = [n for n in same if n not in self._used]
                number = unused[0] if unused else same[-1]
            else:
                self.unmatched += 1
                queue = self._by_task.get((path, task_of(body)), deque())
                while queue and queue[0] in self._used:
                    queue.popleft()
                number = queue.popleft() if queue else None
            if number is not None:
                self._used.add(number)
                self.served.append(request_fields(path, body) | {"record": number})
            return number

    def _answer(self, handler: _Handler, body: dict) -> None:
        number = self._pick(handler.path, body)
        if number is None:
            message = {"error": {"message": f"nothing recorded for {handler.path} task {task_of(body)}"}}
            handler.send(404, json.dumps(message).encode())
            return
        record = self.records[number]
        if record["status"] is None:  # the real server dropped the connection
            handler.close_connection = True
            return
        if "streamed" in record:
            handler.send(record["status"], _as_events(record["streamed"], body.get("model")), "text/event-stream")
            return
        answer = record["body"]
        if handler.path.endswith("/embeddings"):
            answer = _expanded_embeddings(answer)
        payload = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        handler.send(record["status"], payload.encode())


def _as_events(stream: dict, model: str | None) -> bytes:
    head = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": 0, "model": model}
    text = stream["content"]
    pieces = [text[i : i + 16] for i in range(0, len(text), 16)] or [""]
    events = [
        head | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}]}
        for piece in pieces
    ]
    events.append(head | {"choices": [{"index": 0, "delta": {}, "finish_reason": stream["finish_reason"]}]})
    if stream.get("usage"):
        events.append(head | {"choices": [], "usage": stream["usage"]})
    lines = [f"data: {json.dumps(event, ensure_ascii=False)}\n\n" for event in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def _expanded_embeddings(body):
    """Vectors of the recorded shapes, the recorded first values repeated."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return body
    data = []
    for item in body["data"]:
        head, shape = item["head"] or [0.0], item["shape"]
        row = (head * (shape[-1] // len(head) + 1))[: shape[-1]]
        data.append(
            {"object": "embedding", "index": item["index"], "embedding": [row] * shape[0] if len(shape) == 2 else row}
        )
    return body | {"data": data}
