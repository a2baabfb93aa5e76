"""A user's program over the installed `ccv3` wheel (issue 30, scripts/test-packages).

It calls every exported function with the package's own types; `mypy --strict` and `pyright`
(strict) check it against the package's stubs, then it runs. `assert_type` lines prove that the
results are the stubs' TypedDicts, not `Any`; each `# type: ignore[...]` line must be a type
error (both checkers report an ignore that hides nothing).

    CCV3_EXAMPLES=examples python program.py
"""

from __future__ import annotations

import os
import pathlib
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, TypeVar, Union

import ccv3

if TYPE_CHECKING:
    from typing_extensions import assert_type
    from ccv3 import (
        ActivatedEntry,
        CardSummary,
        CharacterCardV3,
        ChatMessage,
        Decorator,
        Diagnostic,
        LintFinding,
        Lorebook,
        LorebookEntry,
        LoreGraph,
        ParsedDecorators,
        PortabilityFinding,
        PromptResult,
        RejectedEntry,
        ScanResult,
    )
else:
    T = TypeVar("T")

    def assert_type(value: T, _type: object) -> T:
        """typing.assert_type of Python 3.11 (the program runs on 3.9+ with nothing installed)."""
        return value


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"consumer: {what}")


examples = pathlib.Path(os.environ.get("CCV3_EXAMPLES", "examples"))
png_path = examples / "ember.png"
png: bytes = png_path.read_bytes()

# Cards.
card = ccv3.read_card(png)
assert_type(card, "CharacterCardV3")
name: str = card["data"]["name"]
check(name == "Ember Vale", f"card name {name}")
check(ccv3.read_card(png_path, parse_decorators=False)["data"]["name"] == name, "a card read from a path")
summary: CardSummary = ccv3.read_card_summary(png)
check(summary["name"] == name and summary["entries"] == 5, "the summary agrees with the card")
many: List[Tuple[Union[str, os.PathLike[str]], Union[CharacterCardV3, ccv3.Ccv3Error]]] = list(
    ccv3.read_cards([png_path, examples / "chat.json"], threads=2)
)
check(not isinstance(many[0][1], ccv3.Ccv3Error), "read_cards: the card")
check(isinstance(many[1][1], ccv3.Ccv3Error), "read_cards: a chat is no card")
book: Optional[Lorebook] = card["data"].get("character_book")
check(book is not None and len(book["entries"]) == 5, "the card has a 5-entry book")
assert book is not None
entry: LorebookEntry = book["entries"][0]
keys: List[str] = entry["keys"]
decorators: List[Decorator] = entry.get("decorators", [])
charx: bytes = ccv3.write_card(card, format="charx")
check(ccv3.read_card(charx)["data"]["name"] == name, "CHARX round trip")
diagnostics: List[Diagnostic] = ccv3.validate_card(png)
check(all(d["severity"] != "error" for d in diagnostics), "no validation error")


def wrong_calls() -> None:
    """Never called: each line must be a type error."""
    ccv3.write_card(card, format="gif")  # type: ignore[arg-type]
    ccv3.read_card(12)  # type: ignore[arg-type]
    ccv3.count_tokens("hello", "gpt2")  # type: ignore[arg-type]
    card["data"]["nme"]  # type: ignore[typeddict-item]


# Lorebooks and decorators.
world = ccv3.read_lorebook(examples / "world.json")
assert_type(world, "Lorebook")
world_json: bytes = ccv3.write_lorebook(world, format="worldinfo")
check(len(ccv3.read_lorebook(world_json)["entries"]) == len(world["entries"]), "World Info round trip")
book_diagnostics: List[Diagnostic] = ccv3.validate_lorebook(world)
parsed: ParsedDecorators = ccv3.parse_decorators("@@depth 2\n@@role system\nThe lamp.")
check(parsed["content"] == "The lamp." and len(parsed["decorators"]) == 2, "decorators parsed")
written: str = ccv3.serialize_decorators(parsed["decorators"], parsed["content"])
check(written.startswith("@@depth 2"), f"decorators written: {written}")

# Analyses.
lint: List[LintFinding] = ccv3.lint_card(png, app="sillytavern")
budget = next((f["budget"] for f in lint if f["code"] == "lore-budget-plan" and "budget" in f), None)
check(budget is not None and budget["total"] >= budget["constant"], "the budget plan")
book_lint: List[LintFinding] = ccv3.lint_lorebook(world, {"tokenizer": "estimate"})
graph: LoreGraph = ccv3.lore_graph(card)
check(len(graph["nodes"]) == 5, "one graph node per entry")
port: List[PortabilityFinding] = ccv3.portability(png, apps=["sillytavern", "v2"])
check(all(f["app"] in ("sillytavern", "v2") for f in port), "portability apps")

# The lorebook engine and prompts.
chat: List[ChatMessage] = [
    {"role": "user", "name": "Sam", "content": "Tell me about the lighthouse lamp and the Teeth."}
]
scan = ccv3.scan_lorebook([book, world], chat, tokenizer="o200k")
assert_type(scan, "ScanResult")
activated: List[ActivatedEntry] = scan["activated"]
rejected: List[RejectedEntry] = scan["rejected"]
check(any(a["name"] == "Old Sol" for a in activated), f"activated: {[a['name'] for a in activated]}")
compiled = ccv3.compile_lorebooks([book], trigger="normal")
names: List[str] = compiled.book_names
again: ScanResult = ccv3.scan_lorebook(compiled, chat, state=scan["state"])
turn: ScanResult = compiled.scan([{"role": "user", "content": "The lamp?"}], state=again["state"])
prompt: PromptResult = ccv3.build_prompt(card, chat, max_context=4096, user="Sam", books=[world])
check(len(prompt["messages"]) > 0 and prompt["tokens"] > 0, "a prompt")
text: str = ccv3.expand_macros("{{char}} greets {{user}}.", card=card, user="Sam")
check(text == "Ember greets Sam.", f"macros: {text}")
tokens: int = ccv3.count_tokens("hello world", "o200k")
check(tokens == 2, f"tokens: {tokens}")
state: Dict[str, object] = scan["state"]

# Errors carry a stable code.
try:
    ccv3.read_card(b"\x01\x02\x03")
    check(False, "garbage read as a card")
except ccv3.Ccv3Error as e:
    code: str = e.code
    check(code in ("read-failed", "bad-input"), f"error code {code}")

print(
    f"consumer: ccv3 {ccv3.__version__}: {name}, {len(keys)} keys and {len(decorators)} decorators on entry 0, "
    f"{len(many)} cards read, {len(diagnostics) + len(book_diagnostics)} diagnostics, "
    f"{len(lint) + len(book_lint)} lint findings, {len(graph['edges'])} graph edges, "
    f"{len(port)} portability findings, {len(activated)} activated / {len(rejected)} rejected "
    f"({len(again['activated'])} again, {len(turn['activated'])} next turn, books {names}), "
    f"{len(prompt['messages'])} prompt messages, {len(state)} state keys"
)
