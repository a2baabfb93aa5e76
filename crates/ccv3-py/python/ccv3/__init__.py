"""Character Card V3 for Python: cards, lorebooks, decorators, the lorebook engine and prompts.

The reference implementation of the Character Card V3 standard (written in Rust), as plain
functions on dicts, lists and bytes; values are shaped as in the npm package ``ccv3``.

>>> import ccv3
>>> card = ccv3.read_card("examples/ember.png")          # bytes or a path
>>> card["data"]["name"]
'Ember Vale'

Failures raise :class:`Ccv3Error` (a :class:`ValueError`) whose ``code`` is a stable string.
The interpreter is released while the Rust code works, so threads run in parallel.
"""

from __future__ import annotations

import itertools as _itertools
import json as _json
import os as _os

from . import _ccv3
from ._ccv3 import Ccv3Error

__version__: str = _ccv3.__version__

__all__ = [
    "Ccv3Error",
    "__version__",
    "read_card",
    "read_cards",
    "read_card_summary",
    "read_lorebook",
    "parse_decorators",
    "serialize_decorators",
    "write_card",
    "write_lorebook",
    "validate_card",
    "validate_lorebook",
    "lint_card",
    "lint_lorebook",
    "lore_graph",
    "portability",
    "scan_lorebook",
    "compile_lorebooks",
    "CompiledLorebooks",
    "build_prompt",
    "expand_macros",
    "count_tokens",
]


def _error(code, message):
    err = Ccv3Error(message)
    err.code = code
    return err


def _is_path(data):
    return isinstance(data, (str, _os.PathLike))


def _bytes(data, what="data"):
    """The bytes of ``data``: bytes-like, or a path to read."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    if _is_path(data):
        try:
            with open(data, "rb") as f:
                return f.read()
        except OSError as e:
            raise _error("read-failed", f"{_os.fsdecode(_os.fspath(data))}: {e.strerror or e}") from None
    raise _error("bad-input", f"{what} must be bytes or a path, not {type(data).__name__}")


def _dumps(value, what):
    try:
        return _json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise _error("bad-input", f"{what}: {e}") from None


# JSON text to dicts and lists in Rust (keys interned): faster than json.loads on big values.
_loads = _ccv3.loads


def read_card(data, parse_decorators=True):
    """Reads a card file (V1/V2/V3 JSON, PNG/APNG, CHARX, WebP, JPEG) as the V3 dict
    ``{"spec", "spec_version", "data"}``; V1 and V2 cards are upgraded.

    With ``parse_decorators`` (the default) each lorebook entry gets ``decorators`` (see
    :func:`parse_decorators`) and its ``content`` without the decorator lines.

    >>> card = read_card("examples/ember.png")
    >>> card["spec"], card["data"]["name"], len(card["data"]["character_book"]["entries"])
    ('chara_card_v3', 'Ember Vale', 5)
    """
    if _is_path(data):
        # Rust reads the file itself: a PNG's image data is skipped, never read.
        return _ccv3.read_card_path_value(_os.fsdecode(_os.fspath(data)), bool(parse_decorators))
    return _ccv3.read_card_value(_bytes(data), bool(parse_decorators))


def read_card_summary(data, tokens=None):
    """What a character list shows of a card file, read without building the card (much faster
    than :func:`read_card` on big cards): a dict with ``name``, ``nickname`` (``None`` when
    unset), ``creator``, ``tags``, ``spec`` (``"V1"``, ``"V2"`` or ``"V3"``), ``spec_version``,
    ``container`` (``"JSON"``, ``"PNG"``, ``"CHARX"``, ...), ``greetings`` (``first_mes`` when
    not empty plus the alternate greetings), ``entries`` (of the embedded lorebook) and
    ``assets``. The values are those :func:`read_card` gives; a lorebook file is an error.
    With ``tokens`` (an encoding: ``"o200k"``, ``"cl100k"`` or ``"estimate"``), also
    ``permanent_tokens``: the tokens of the fields SillyTavern counts as permanent (name,
    description, personality, scenario, ``extensions.depth_prompt.prompt``), each counted and
    added.

    >>> summary = read_card_summary("examples/ember.png")
    >>> summary["name"], summary["container"], summary["entries"]
    ('Ember Vale', 'PNG', 5)
    """
    if _is_path(data):
        return _loads(_ccv3.read_card_summary_path(_os.fsdecode(_os.fspath(data)), tokens))
    return _loads(_ccv3.read_card_summary(_bytes(data), tokens))


def read_cards(paths, threads=None, parse_decorators=True):
    """Reads many card files in parallel, yielding ``(path, card)`` or ``(path, Ccv3Error)``
    in the order of ``paths`` (any iterable, read lazily in batches).

    ``threads`` is the number of threads (default: one per core).

    >>> for path, card in read_cards(["examples/ember.png", "examples/ember.charx"]):
    ...     print(path, card["data"]["name"])
    examples/ember.png Ember Vale
    examples/ember.charx Ember Vale
    """
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise _error("bad-input", f"threads must be a whole number of at least 1, not {threads!r}")
    it = iter(paths)
    batch_size = 64 * (threads or _os.cpu_count() or 1)
    while True:
        batch = list(_itertools.islice(it, batch_size))
        if not batch:
            return
        names = [_os.fsdecode(_os.fspath(p)) for p in batch]
        # Read in parallel; each card becomes a dict only when its turn to be yielded comes.
        results = _ccv3.read_cards_batch(names, threads, bool(parse_decorators))
        for i, path in enumerate(batch):
            card, code, message = results.take(i)
            yield path, (card if code is None else _error(code, message))


def read_lorebook(data, parse_decorators=True):
    """Reads a lorebook file (``lorebook_v3``, a bare book, SillyTavern World Info, NovelAI,
    Agnai, RisuAI) as the Lorebook dict (the structure of a card's ``data.character_book``).
    A card's bytes give its character book.

    >>> book = read_lorebook("examples/world.json")
    >>> book["entries"][0]["keys"]
    ['mainland', 'Harrowport']
    """
    return _ccv3.read_lorebook_value(_bytes(data), bool(parse_decorators))


def parse_decorators(content):
    """Reads the ``@@`` decorator lines at the top of an entry's content:
    ``{"decorators": [...], "content": body}``.

    A decorator is ``{"type": name, "value": v}``: ``v`` a number for numeric decorators
    (``depth``, ``scan_depth``, ...), a string for ``role``/``position``, a list of strings for
    ``additional_keys``/``exclude_keys``, absent for flags (``activate``, ...). An unknown
    decorator is ``{"type": "unknown", "name": name, "value": text}``. ``@@@`` fallbacks are
    ``"fallbacks": [...]`` on the decorator they follow.

    >>> parse_decorators("@@depth 2\\n@@activate\\nThe lamp.")
    {'decorators': [{'type': 'depth', 'value': 2}, {'type': 'activate'}], 'content': 'The lamp.'}
    """
    return _loads(_ccv3.parse_decorators(content))


def serialize_decorators(decorators, content):
    """Writes ``decorators`` as ``@@`` lines above ``content``; the inverse of
    :func:`parse_decorators`.

    >>> serialize_decorators([{"type": "depth", "value": 2}], "The lamp.")
    '@@depth 2\\nThe lamp.'
    """
    return _ccv3.serialize_decorators(_dumps(decorators, "decorators"), content)


def write_card(card, format="png", image=None):
    """Writes a card dict as ``format`` (``"png"``, ``"charx"``, ``"json"`` or ``"json-v2"``, the
    spec's V2 backfill) and returns the bytes. Decorators are written back to ``@@`` lines; PNG carries ``ccv3`` plus the V2
    ``chara`` backfill, on ``image`` (PNG bytes or a path), else the card's own picture or a
    placeholder.

    >>> card = read_card("examples/ember.json")
    >>> write_card(card, "png")[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    >>> read_card(write_card(card, "charx"))["data"]["name"]
    'Ember Vale'
    """
    img = None if image is None else _bytes(image, "image")
    return _ccv3.write_card(_dumps(card, "card"), format, img)


def write_lorebook(book, format=None):
    """Writes a Lorebook dict as ``lorebook_v3`` JSON (the default) or, with
    ``format="worldinfo"``, SillyTavern World Info; returns the bytes.

    >>> book = read_lorebook("examples/world.json")
    >>> data = write_lorebook(book, format="worldinfo")
    >>> len(read_lorebook(data)["entries"]) == len(book["entries"])
    True
    """
    return _ccv3.write_lorebook(_dumps(book, "lorebook"), format)


def _validate(kind, data):
    if isinstance(data, dict):
        return _loads(_ccv3.validate(kind, None, _dumps(data, kind)))
    return _loads(_ccv3.validate(kind, _bytes(data), None))


def validate_card(data):
    """Validates a card (a dict, bytes or a path): a list of
    ``{"severity", "code", "path", "message"}`` as ``ccv3 validate --json`` reports.

    >>> validate_card("examples/ember.png")
    []
    >>> validate_card({"spec": "chara_card_v3", "spec_version": "3.0", "data": {}})[0]["severity"]
    'error'
    """
    return _validate("card", data)


def validate_lorebook(data):
    """Validates a lorebook (a dict, bytes or a path): a list of
    ``{"severity", "code", "path", "message"}``.

    >>> validate_lorebook("examples/world.json")
    []
    """
    return _validate("lorebook", data)


def _analyze(kind, data, options, kwargs):
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise _error("bad-input", f"options must be a dict, got {type(options).__name__}")
    opts = _dumps({**options, **kwargs}, "options")
    if isinstance(data, dict):
        return _loads(_ccv3.analyze(kind, None, _dumps(data, "input"), opts))
    return _loads(_ccv3.analyze(kind, _bytes(data), None, opts))


def lint_card(data, options=None, **kwargs):
    """Lints a card (a dict, bytes or a path): its lorebook and the macros and decorators of its
    text, as ``ccv3 lint --json`` (a list of ``{"severity", "code", "path", "entry", "message"}``,
    ``"budget"`` on ``lore-budget-plan``). Options (a dict or keywords): ``app`` (``"spec"``,
    ``"sillytavern"``, ``"risuai"``, ``"agnai"``), ``tokenizer`` (``"o200k"``, ``"cl100k"``,
    ``"estimate"``), ``budget``, ``max_context``, ``budget_cap``.

    >>> findings = lint_card("examples/ember.png", app="sillytavern", tokenizer="estimate")
    >>> [f["code"] for f in findings if f["code"] == "lore-budget-plan"]
    ['lore-budget-plan']
    """
    return _analyze("lint_card", data, options, kwargs)


def lint_lorebook(data, options=None, **kwargs):
    """Lints a lorebook (a dict, bytes or a path) as :func:`lint_card`; paths start at ``data``.

    >>> all(f["path"].startswith("data") for f in lint_lorebook("examples/world.json"))
    True
    """
    return _analyze("lint_lorebook", data, options, kwargs)


def lore_graph(data, options=None, **kwargs):
    """The recursion graph of a lorebook or a card's book (a dict, bytes or a path), as
    ``ccv3 lore graph --json``: ``{"nodes": [{"entry", "name", "constant", "enabled"}],
    "edges": [{"from", "to", "key"}]}`` (and ``"truncated": True`` when the search was cut).

    >>> graph = lore_graph("examples/ember.png")
    >>> [node["name"] for node in graph["nodes"]]
    ['The Teeth', 'Old Sol', 'Supply boat', 'Storms', 'Island']
    """
    return _analyze("lore_graph", data, options, kwargs)


def portability(data, options=None, **kwargs):
    """What SillyTavern, RisuAI, Agnai and any V2 reader do with a card or lorebook (a dict,
    bytes or a path), as ``ccv3 portability --json``: a list of ``{"app", "severity", "code",
    "path", "entry", "message"}``. Option ``apps``: the application ids to report on.

    >>> findings = portability("examples/ember.png", apps=["v2"])
    >>> all(f["app"] == "v2" for f in findings)
    True
    """
    return _analyze("portability", data, options, kwargs)


def _source(value, what):
    """A card or book for a request: a dict stays, bytes-like values and paths become bytes."""
    if isinstance(value, dict):
        return value
    return _bytes(value, what)


def _request(books):
    """Splits ``books`` into JSON values and bytes for the native call."""
    values = []
    blobs = []
    for i, b in enumerate(books):
        s = _source(b, f"books[{i}]")
        if isinstance(s, bytes):
            values.append({"$bytes": len(blobs)})
            blobs.append(s)
        else:
            values.append(s)
    return values, blobs


def scan_lorebook(books, chat, state=None, seed=None, **options):
    """Runs the lorebook engine over ``chat`` (a list of ``{"role", "name", "content"}``):
    ``{"activated", "rejected", "tokens", "state"}``.

    ``books`` are Lorebook dicts, or file bytes or paths (a card file means its character
    book). Pass the returned ``state`` to the next turn. Options as in the npm package and
    ``ccv3 lore scan``, with the same defaults: ``user``, ``char`` (default: the first card's
    name), ``greeting`` (default 0, ``first_mes``, for ``@@is_greeting``), ``scan_depth``, ``recursive``, ``max_context``, ``tokenizer``,
    ``compat="sillytavern"`` (SillyTavern 1.15's results), ...;
    the engine settings (as the ``ccv3 lore scan`` flags): ``min_activations``,
    ``min_activations_depth_max``, ``max_recursion_steps``, ``budget``, ``budget_cap``,
    ``include_names``, ``whole_words``, ``case_sensitive``, ``group_scoring`` (booleans:
    defaults for entries that do not say) and ``trigger`` (``"normal"``, ``"continue"``,
    ``"impersonate"``, ``"swipe"``, ``"regenerate"``, ``"quiet"``); ``persona`` (the persona
    description, for entries with ``match_persona_description``). For SillyTavern (issue 28):
    ``book_kinds`` (per book ``"character"``, ``"global"``, ``"chat"``, ``"persona"`` or
    ``None``), ``st_timed`` (its ``chat_metadata["timedWorldInfo"]``: the scan starts from those
    sticky/cooldown records) and ``st_activated`` (the entries it activated, ``["world.uid"]``
    or ``{world: [uid]}``: with ``compat="sillytavern"`` its random draws are replayed).

    ``books`` may also be a :class:`CompiledLorebooks` (see :func:`compile_lorebooks`): its
    options were fixed when it was compiled, but for ``st_timed`` and ``st_activated``.

    >>> chat = [{"role": "user", "content": "Is a storm coming to the Teeth?"}]
    >>> result = scan_lorebook(["examples/ember.png"], chat)
    >>> [entry["name"] for entry in result["activated"]]
    ['Island', 'The Teeth']
    >>> [entry["reason"] for entry in result["rejected"] if entry["name"] == "Storms"]
    ['secondary logic AND_ANY']
    >>> after = scan_lorebook(["examples/ember.png"], chat, state=result["state"])
    """
    if isinstance(books, CompiledLorebooks):
        per_scan = {k: options.pop(k) for k in ("st_timed", "st_activated") if k in options}
        if options:
            raise _error("bad-input", "options are fixed when the books are compiled: "
                         + ", ".join(sorted(options)))
        return books.scan(chat, state=state, seed=seed, **per_scan)
    values, blobs = _request(list(books))
    request = dict(options)
    request.update({"books": values, "chat": chat, "state": state, "seed": seed})
    return _loads(_ccv3.scan_lorebook(_dumps(request, "request"), blobs))


class CompiledLorebooks:
    """Lorebooks compiled once (see :func:`compile_lorebooks`), scanned turn after turn."""

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    @property
    def book_names(self):
        """The books' display names (their ``name``, else ``books[i]``), in order.

        >>> compile_lorebooks(["examples/world.json"]).book_names
        ['books[0]']
        """
        return self._native.book_names()

    def scan(self, chat, state=None, seed=None, st_timed=None, st_activated=None):
        """As :func:`scan_lorebook`, with the options given at compile time (``st_timed`` and
        ``st_activated`` are per scan).

        >>> books = compile_lorebooks(["examples/ember.png"])
        >>> result = books.scan([{"role": "user", "content": "Is the lamp lit?"}])
        >>> [entry["name"] for entry in result["activated"]]
        ['Island', 'Old Sol']
        """
        request = {"chat": chat, "state": state, "seed": seed,
                   "st_timed": st_timed, "st_activated": st_activated}
        return _loads(self._native.scan(_dumps(request, "request")))


def compile_lorebooks(books, **options):
    """Compiles ``books`` (as :func:`scan_lorebook` takes them) once with ``options``, for many
    scans: compiling a big book costs far more than scanning it.

    >>> books = compile_lorebooks(["examples/ember.png", "examples/world.json"])
    >>> chat = [{"role": "user", "content": "Tea at Harrowport?"}]
    >>> [entry["book"] for entry in scan_lorebook(books, chat)["activated"]]
    [...'books[1]'...]
    """
    values, blobs = _request(list(books))
    request = dict(options)
    request["books"] = values
    return CompiledLorebooks(_ccv3.CompiledLorebooks(_dumps(request, "options"), blobs))


def build_prompt(card, chat, **options):
    """Builds the prompt for ``card`` (a dict, bytes or a path) and ``chat``:
    ``{"messages", "tokens", "lore", "cut", "state"}`` as ``ccv3 prompt --json``, plus ``state``.

    Options: ``books``, ``state``, ``seed``, ``user``, ``max_context``, ``instruct``, ..., and
    the engine settings of :func:`scan_lorebook` (``min_activations``, ``trigger``, ...).

    >>> chat = [{"role": "user", "name": "Sam", "content": "Hello!"}]
    >>> prompt = build_prompt("examples/ember.png", chat, user="Sam", max_context=4096)
    >>> prompt["messages"][0]["role"], prompt["tokens"] > 0
    ('system', True)
    """
    books = list(options.pop("books", None) or [])
    values, blobs = _request(books)
    c = _source(card, "card")
    if isinstance(c, bytes):
        blobs.append(c)
        c = {"$bytes": len(blobs) - 1}
    request = dict(options)
    request.update({"card": c, "books": values, "chat": chat})
    return _loads(_ccv3.build_prompt(_dumps(request, "request"), blobs))


def expand_macros(text, **context):
    """Expands the CBS macros of ``text`` (``{{char}}``, ``{{user}}``, ``{{random:...}}``, ...).

    Context keywords: ``card`` (a dict, bytes or a path), ``chat``, ``user``, ``char``,
    ``variables`` (``{"local": {...}, "global": {...}}`` or a flat dict), ``now`` (unix
    seconds; without it time macros are empty), ``seed``, ``greeting``, ``display``.

    >>> expand_macros("{{char}} greets {{user}}.", card="examples/ember.png", user="Sam")
    'Ember greets Sam.'
    """
    card = context.get("card")
    if card is not None and not isinstance(card, dict):
        context["card"] = read_card(card)
    return _ccv3.expand_macros(text, _dumps(context, "context"))


def count_tokens(text, encoding="o200k"):
    """Counts the tokens of ``text`` with ``encoding``: ``"o200k"`` (the default), ``"cl100k"``
    or ``"estimate"``.

    >>> count_tokens("hello world")
    2
    """
    return _ccv3.count_tokens(text, encoding)
