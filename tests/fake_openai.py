"""An OpenAI-compatible HTTP server for tests and benchmarks, on 127.0.0.1.

It speaks the real wire protocol (``/v1/chat/completions``, ``/v1/embeddings``), so the
client (graphrag_assets.llm) talks to it over real sockets. Answers are
scripted from the request: the prompt's task marker decides the shape (JSON, or plain text
for the final-answer tasks), the text in the prompt decides the content (capitalised names
become entities), so the same input always gets the same answer. A request with
``"stream": true`` is answered as Server-Sent Events, about one token per chunk. Faults
can be queued (HTTP status with Retry-After, malformed JSON), latency can be simulated
(fixed, and a random extra delay per request so that answers arrive in an order unrelated
to the requests'), and every request is recorded for assertions.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b|[\u4e00-\u9fff]{2,4}")
# With ``capitals``: names written in capitals too ("SALTMARSH SQUARE"), as a model copies
# them from headings, so one name has several written forms across text units.
_NAME_OR_CAPITALS = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b|\b[A-Z]{2,}(?: [A-Z]{2,})*\b|[\u4e00-\u9fff]{2,4}")
_SKIP = {
    "The",
    "A",
    "An",
    "In",
    "On",
    "At",
    "It",
    "He",
    "She",
    "They",
    "We",
    "I",
    "But",
    "And",
    "This",
    "That",
    "When",
    "After",
    "Since",
    "Later",
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 drops the connections a client opens at once
    # beyond it, and the kernel retries them only after a second: with 16 calls starting
    # together that second would be charged to the client. Real servers accept hundreds.
    request_queue_size = 256


def _names(text: str, limit: int = 8, capitals: bool = False) -> list[str]:
    found = []
    for name in (_NAME_OR_CAPITALS if capitals else _NAME).findall(text):
        if name.title() not in _SKIP and name not in found:
            found.append(name)
    return found[:limit]


def _section(prompt: str, marker: str) -> str:
    """Text after a '-----marker-----' heading, up to the next heading."""
    match = re.search(rf"-----{marker}-----\n(.*?)(?:\n-----|\Z)", prompt, re.S)
    return match.group(1) if match else prompt


TEXT_TASKS = {"answer", "global_reduce", "drift_reduce"}  # answered in plain text, not JSON
CHARACTERS_PER_TOKEN = 4


def scripted_answer(task: str, prompt: str, capitals: bool = False) -> dict | str:
    """The JSON object a cooperative model would return for this task, or the text for a
    plain-text task. With ``capitals``, names written in capitals are extracted too."""
    if task in TEXT_TASKS:
        return "Scripted answer."
    if task == "extract_graph" or task == "glean":
        text = _section(prompt, "Text")
        if task == "glean":
            return {"entities": [], "relationships": []}  # nothing was missed
        names = _names(text, capitals=capitals)
        entities = [
            {"name": n, "type": "PERSON" if " " in n else "ORGANIZATION", "description": f"{n} appears in the text."}
            for n in names
        ]
        relationships = [
            {"source": a, "target": b, "description": f"{a} is mentioned with {b}.", "strength": 5}
            for a, b in zip(names, names[1:])
        ]
        return {"entities": entities, "relationships": relationships}
    if task == "extract_claims":
        # Scripted rule: a claim for each sentence naming two of the names the extraction
        # finds in the text, about the first and involving the second; SUSPECTED when the
        # sentence speaks of plans or intentions, dated when it gives a year.
        text = _section(prompt, "Text")
        known = _names(text)
        claims = []
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            named = [n for n in _names(sentence, limit=100) if n in known]
            if len(named) < 2:
                continue
            year = re.search(r"\b(1[89]\d\d|20\d\d)\b", sentence)
            claims.append(
                {
                    "subject": named[0],
                    "object": named[1],
                    "type": "ASSOCIATION",
                    "status": "SUSPECTED" if re.search(r"\b(plans?|will|wants?|asked)\b", sentence) else "TRUE",
                    "start_date": f"{year.group(1)}-01-01" if year else None,
                    "end_date": None,
                    "description": f"{named[0]} is linked to {named[1]}.",
                    "source_text": sentence.strip(),
                }
            )
        return {"claims": claims}
    if task == "summarize_descriptions":
        descriptions = [line[2:] for line in _section(prompt, "Descriptions").splitlines() if line.startswith("- ")]
        return {"summary": " ".join(sorted(set(descriptions)))[:400]}
    if task == "confirm_merges":
        # Scripted judgement: two names are one entity when they share a whole word
        # ("Renn" / "Tobias Renn"), two when they do not ("Ellison" / "Ellisons").
        verdicts = []
        for number, a, b in re.findall(
            r"^Pair (\d+)[^\n]*\nA: ([^\n]*?) \[[^\n]*\nB: ([^\n]*?) \[", _section(prompt, "Pairs"), re.M
        ):
            shared = sorted(set(a.lower().split()) & set(b.lower().split()))
            reason = f"Both names contain '{shared[0]}'." if shared else "The names have no word in common."
            verdicts.append({"pair": int(number), "same": bool(shared), "reason": reason})
        return {"verdicts": verdicts}
    if task == "community_report":
        # Rows "id|entity|description|...": the report names the first three and cites their ids.
        rows = [row.split("|") for row in _section(prompt, "Entities").splitlines()[1:] if row.count("|") >= 2]
        cited = {row[1]: row[0] for row in rows[:3]}
        names = list(cited) or ["Community"]
        return {
            "title": " and ".join(names),
            "summary": f"A community around {', '.join(names)}.",
            "rating": 5.0,
            "rating_explanation": "Scripted rating.",
            "findings": [
                {
                    "summary": f"About {n}",
                    "explanation": f"{n} is part of this community. [Data: Entities ({cited.get(n, 0)})]",
                }
                for n in (names * 5)[:5]
            ],
        }
    if task == "global_map":
        return {"points": [{"description": "Scripted point. [Data: Reports (0)]", "score": 50}]}
    if task == "rate_community":
        return {"rating": 3}
    if task == "drift_local":
        asked = re.search(r"^Question: (.*)$", prompt, re.M)
        question = asked.group(1) if asked else "the question"
        return {
            "answer": f"Scripted answer to: {question}",
            "follow_up_queries": [f"More on ({question})?"],
            "score": 50,
        }
    return {"answer": "Scripted answer."}


@dataclass
class Fault:
    status: int = 500
    retry_after: float | None = None
    body: str | None = None  # a 200 response with this raw content instead of valid JSON
    match: str | None = None  # only for a request whose prompt contains this text
    message: str = "injected fault"  # the error's message, for an error status
    finish_reason: str | None = None  # with ``body``: the finish reason given ("length": cut off at max_tokens)
    path: str | None = None  # only for a request to a path ending with this ("/embeddings")


@dataclass
class FakeOpenAI:
    latency_seconds: float = 0.0  # before the answer (the first chunk of a stream)
    jitter_seconds: float = 0.0  # plus a random delay up to this, drawn per request (not for streams)
    capitals: bool = False  # extraction takes names written in capitals too (see _NAME_OR_CAPITALS)
    seconds_per_completion_token: float = 0.0  # spread over the chunks of a stream
    tools_in_text: bool = False  # answers a forced function call in the text, as some local servers do
    # Usage in streams asked for with stream_options.include_usage: "reported" in a last
    # chunk, "ignored" (no usage chunk), or "rejected" (HTTP 400 naming the option).
    stream_usage: str = "reported"
    embedding_dimensions: int = 16
    # Above 0: a vector per token of each input, this many tokens (as a server serving an
    # embedding model without pooling answers).
    tokens_per_embedding: int = 0
    # Vectors as base64 float32 when asked for with encoding_format (as OpenAI does), or
    # always as lists of numbers (as some local servers do).
    base64_embeddings: bool = True
    # Above 0: a stream's connection is dropped after this many pieces, without its end, as
    # a proxy or a crashing server does.
    cut_streams_after: int = 0
    # Not None: once this many requests were answered, every later one gets HTTP 401, as
    # when a key is revoked in the middle of a run (set it to None again: the key is fixed).
    refuse_after_answers: int | None = None
    requests: list[dict] = field(default_factory=list)
    faults: deque = field(default_factory=deque)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _answers: int = 0  # requests taken to be answered (not refused by a fault)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def completions(self, task: str | None = None) -> list[dict]:
        return [
            r for r in self.requests if r["path"].endswith("/chat/completions") and (task is None or r["task"] == task)
        ]

    def embedding_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/embeddings")]

    def answered(self) -> list[dict]:
        """The requests whose whole answer was sent (HTTP 200)."""
        return [r for r in self.requests if r.get("answered")]

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload: str, headers: dict | None = None):
                body = payload.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                fake._handle(self, request)

        self._server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, handler, request: dict) -> None:
        path, _, query = handler.path.partition("?")
        messages = request.get("messages", [])
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        task_match = re.search(r"\[task: ([a-z_]+)\]", prompt)
        record = {
            "path": path,
            "query": query,  # Azure OpenAI's api-version travels here
            "task": task_match.group(1) if task_match else None,
            "body": request,
            "headers": {name.lower(): value for name, value in handler.headers.items()},  # names are case-blind
            "started": time.monotonic(),
        }
        with self._lock:
            self.requests.append(record)
            fault = next(
                (
                    f
                    for f in self.faults
                    if (f.match is None or f.match in prompt) and (f.path is None or path.endswith(f.path))
                ),
                None,
            )
            if fault is not None:
                self.faults.remove(fault)
            elif self.refuse_after_answers is not None and self._answers >= self.refuse_after_answers:
                fault = Fault(status=401, message="Incorrect API key provided")
            else:
                self._answers += 1  # counted when taken, so concurrent requests cannot overshoot
        if fault is not None and fault.body is None:
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
            handler._send(
                fault.status, json.dumps({"error": {"message": fault.message, "type": "server_error"}}), headers
            )
            return
        if path.endswith("/embeddings"):
            inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
            encode = self.base64_embeddings and request.get("encoding_format") == "base64"
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
                    if encode and not self.tokens_per_embedding
                    else vector,
                }
                for i, text in enumerate(inputs)
                for vector in [self._vector(text)]
                for vector in [[vector] * self.tokens_per_embedding if self.tokens_per_embedding else vector]
            ]
            latency = self.latency_seconds + self._jitter()
            time.sleep(latency)
            record |= {
                "latency": latency,
                "prompt_tokens": 8 * len(inputs),
                "completion_tokens": 0,
                "finished": time.monotonic(),
            }
            handler._send(
                200,
                json.dumps(
                    {
                        "object": "list",
                        "data": data,
                        "model": request.get("model"),
                        "usage": {"prompt_tokens": 8 * len(inputs), "total_tokens": 8 * len(inputs)},
                    }
                ),
            )
            record["answered"] = True
            return
        if request.get("stream") and request.get("stream_options") and self.stream_usage == "rejected":
            handler._send(
                400,
                json.dumps(
                    {
                        "error": {
                            "message": "Unrecognized request argument supplied: stream_options",
                            "type": "invalid_request_error",
                        }
                    }
                ),
            )
            return
        scripted = scripted_answer(record["task"] or "", prompt, capitals=self.capitals)
        answer = scripted if isinstance(scripted, str) else json.dumps(scripted, ensure_ascii=False)
        if fault is not None:
            answer = fault.body
        completion_tokens = max(1, len(answer) // CHARACTERS_PER_TOKEN)
        prompt_tokens = max(1, len(prompt) // CHARACTERS_PER_TOKEN)
        latency = self.latency_seconds + self.seconds_per_completion_token * completion_tokens + self._jitter()
        record |= {"latency": latency, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        if request.get("stream"):
            self._stream(handler, record, request, answer)
            return
        time.sleep(latency)
        message: dict = {"role": "assistant", "content": answer}
        if request.get("tools") and not self.tools_in_text:
            name = request["tools"][0]["function"]["name"]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": answer}}],
            }
        record["finished"] = time.monotonic()
        handler._send(
            200,
            json.dumps(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": request.get("model", "fake"),
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": (fault.finish_reason if fault is not None else None)
                            or ("tool_calls" if request.get("tools") else "stop"),
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                }
            ),
        )
        record["answered"] = True

    def _stream(self, handler, record: dict, request: dict, answer: str) -> None:
        """The answer as Server-Sent Events (chunked transfer): ``chat.completion.chunk``
        objects of about one token each, the per-token latency spread over them, a last
        chunk with the usage when ``stream_options.include_usage`` asks for it, then
        ``[DONE]``. Records when the first chunk was sent and when the stream finished."""
        pieces = [answer[i : i + CHARACTERS_PER_TOKEN] for i in range(0, len(answer), CHARACTERS_PER_TOKEN)] or [""]
        pause = self.seconds_per_completion_token * record["completion_tokens"] / len(pieces)
        head = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request.get("model", "fake"),
        }
        events = [
            head
            | {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": piece} if i == 0 else {"content": piece},
                        "finish_reason": None,
                    }
                ]
            }
            for i, piece in enumerate(pieces)
        ]
        events.append(head | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (request.get("stream_options") or {}).get("include_usage") and self.stream_usage == "reported":
            tokens = {"prompt_tokens": record["prompt_tokens"], "completion_tokens": record["completion_tokens"]}
            events.append(head | {"choices": [], "usage": tokens | {"total_tokens": sum(tokens.values())}})

        def send(data: bytes) -> None:
            handler.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()

        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        time.sleep(self.latency_seconds)
        try:
            for i, event in enumerate(events):
                if i == self.cut_streams_after > 0:
                    handler.close_connection = True
                    record["finished"] = time.monotonic()
                    return
                if i < len(pieces):
                    time.sleep(pause)
                send(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
                record.setdefault("first_chunk_sent", time.monotonic())
            send(b"data: [DONE]\n\n")
            handler.wfile.write(b"0\r\n\r\n")
            record["answered"] = True
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
            handler.close_connection = True
        record["finished"] = time.monotonic()

    def _jitter(self) -> float:
        return random.uniform(0.0, self.jitter_seconds) if self.jitter_seconds else 0.0

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        values = [(b - 128) / 128 for b in digest[: self.embedding_dimensions]]
        norm = sum(v * v for v in values) ** 0.5 or 1.0
        return [v / norm for v in values]
