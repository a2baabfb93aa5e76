"""Type stubs of the ccv3 package.

The shapes of cards, lorebooks, entries, findings, scan results and prompts are TypedDicts named
as the npm package's interfaces (bindings/npm/src/index.d.ts). Functions return them; where a
function takes one, a plain ``dict`` is accepted too.
"""

import os
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    Union,
)

from typing_extensions import NotRequired

__version__: str
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

# Any JSON value (``extensions``, ``state`` and other free-form parts).
Json = Any
PathLike = Union[str, "os.PathLike[str]"]
# File bytes or a path to read.
Data = Union[bytes, bytearray, memoryview, PathLike]

class Ccv3Error(ValueError):
    """A ccv3 failure; ``code`` is a stable kebab-case string."""

    code: str

class Decorator(TypedDict):
    type: str
    name: NotRequired[str]
    value: NotRequired[Union[int, float, str, List[str]]]
    fallbacks: NotRequired[List["Decorator"]]

class ParsedDecorators(TypedDict):
    decorators: List[Decorator]
    content: str

class LorebookEntry(TypedDict):
    """A lorebook entry (spec section "Lorebook"); unknown fields are kept in order."""

    keys: List[str]
    content: str
    extensions: Dict[str, Json]
    enabled: bool
    insertion_order: float
    case_sensitive: NotRequired[bool]
    use_regex: bool
    constant: NotRequired[bool]
    name: NotRequired[str]
    priority: NotRequired[float]
    id: NotRequired[Union[int, str]]
    comment: NotRequired[str]
    selective: NotRequired[bool]
    secondary_keys: NotRequired[List[str]]
    position: NotRequired[str]
    # Present when read with ``parse_decorators=True`` (the default).
    decorators: NotRequired[List[Decorator]]

class Lorebook(TypedDict):
    """A lorebook (a card's ``data.character_book``, or a lorebook file as read)."""

    name: NotRequired[str]
    description: NotRequired[str]
    scan_depth: NotRequired[int]
    token_budget: NotRequired[int]
    recursive_scanning: NotRequired[bool]
    extensions: Dict[str, Json]
    entries: List[LorebookEntry]

class Asset(TypedDict):
    type: str
    uri: str
    name: str
    ext: str

class CardData(TypedDict):
    """The ``data`` of a V3 card; unknown fields are kept in order."""

    name: str
    description: str
    tags: List[str]
    creator: str
    character_version: str
    mes_example: str
    extensions: Dict[str, Json]
    system_prompt: str
    post_history_instructions: str
    first_mes: str
    alternate_greetings: List[str]
    personality: str
    scenario: str
    creator_notes: str
    group_only_greetings: List[str]
    character_book: NotRequired[Lorebook]
    assets: NotRequired[List[Asset]]
    nickname: NotRequired[str]
    creator_notes_multilingual: NotRequired[Dict[str, str]]
    source: NotRequired[List[str]]
    creation_date: NotRequired[int]
    modification_date: NotRequired[int]

class CharacterCardV3(TypedDict):
    """A card as :func:`read_card` gives it (V1 and V2 cards are upgraded)."""

    spec: Literal["chara_card_v3"]
    spec_version: str
    data: CardData

# The card as the functions' signatures name it.
Card = CharacterCardV3
# A card or lorebook to write, validate or analyse: the TypedDict, or any dict of that shape.
CardInput = Union[CharacterCardV3, Dict[str, Any]]
LorebookInput = Union[Lorebook, Dict[str, Any]]

class ChatMessage(TypedDict):
    role: str
    name: NotRequired[str]
    content: str

Message = ChatMessage
# A chat: messages (TypedDicts or dicts of that shape), or one text.
Chat = Union[Sequence[ChatMessage], Sequence[Mapping[str, Any]], str]
# What a turn returns and the next turn passes back (opaque, JSON-serialisable).
ScanState = Dict[str, Json]

class Diagnostic(TypedDict):
    severity: Literal["error", "warning", "info"]
    code: str
    path: str
    message: str

def read_card(data: Data, parse_decorators: bool = True) -> Card: ...

class CardSummary(TypedDict):
    name: str
    nickname: Optional[str]
    creator: str
    tags: List[str]
    spec: Literal["V1", "V2", "V3"]
    spec_version: str
    container: Literal["JSON", "PNG", "CHARX", "WebP", "JPEG", "BYAF", "Voxta"]
    greetings: int
    entries: int
    assets: int
    # Only with read_card_summary(data, tokens=...): the permanent fields' tokens.
    permanent_tokens: NotRequired[int]

def read_card_summary(data: Data, tokens: Optional[Literal["o200k", "cl100k", "estimate"]] = None) -> CardSummary: ...
def read_cards(
    paths: Iterable[PathLike], threads: Optional[int] = None, parse_decorators: bool = True
) -> Iterator[Tuple[PathLike, Union[Card, Ccv3Error]]]: ...
def read_lorebook(data: Data, parse_decorators: bool = True) -> Lorebook: ...
def parse_decorators(content: str) -> ParsedDecorators: ...
def serialize_decorators(decorators: Sequence[Decorator], content: str) -> str: ...
def write_card(
    card: CardInput, format: Literal["png", "charx", "json", "json-v2"] = "png", image: Optional[Data] = None
) -> bytes: ...
def write_lorebook(book: LorebookInput, format: Optional[Literal["lorebook_v3", "worldinfo"]] = None) -> bytes: ...
def validate_card(data: Union[CardInput, Data]) -> List[Diagnostic]: ...
def validate_lorebook(data: Union[LorebookInput, Data]) -> List[Diagnostic]: ...
# The applications of the analyses (issue 27); ``"st"`` and ``"risu"`` are accepted too.
App = Literal["spec", "sillytavern", "risuai", "agnai", "v2"]
Severity = Literal["error", "warning", "info"]

class EntryTokens(TypedDict):
    entry: int
    tokens: int

class BudgetPlan(TypedDict):
    limit: int
    constant: int
    triggered_max: int
    total: int
    entries: List[EntryTokens]

class LintFinding(TypedDict):
    severity: Severity
    code: str
    path: str
    entry: Optional[int]
    message: str
    budget: NotRequired[BudgetPlan]

class LintOptions(TypedDict, total=False):
    app: str
    tokenizer: Literal["o200k", "cl100k", "estimate"]
    budget: int
    max_context: int
    budget_cap: int

class LoreGraphNode(TypedDict):
    entry: int
    name: Optional[str]
    constant: bool
    enabled: bool

LoreGraphEdge = TypedDict("LoreGraphEdge", {"from": int, "to": int, "key": str})

class LoreGraph(TypedDict):
    nodes: List[LoreGraphNode]
    edges: List[LoreGraphEdge]
    truncated: NotRequired[bool]

class PortabilityFinding(TypedDict):
    app: App
    severity: Severity
    code: str
    path: str
    entry: Optional[int]
    message: str

# What the analyses take: a card or lorebook (a dict), or file bytes or a path.
AnalysisInput = Union[CardInput, LorebookInput, Data]

def lint_card(
    data: AnalysisInput,
    options: Optional[LintOptions] = None,
    *,
    app: Optional[str] = None,
    tokenizer: Optional[Literal["o200k", "cl100k", "estimate"]] = None,
    budget: Optional[int] = None,
    max_context: Optional[int] = None,
    budget_cap: Optional[int] = None,
) -> List[LintFinding]: ...
def lint_lorebook(
    data: AnalysisInput,
    options: Optional[LintOptions] = None,
    *,
    app: Optional[str] = None,
    tokenizer: Optional[Literal["o200k", "cl100k", "estimate"]] = None,
    budget: Optional[int] = None,
    max_context: Optional[int] = None,
    budget_cap: Optional[int] = None,
) -> List[LintFinding]: ...
def lore_graph(data: AnalysisInput, options: Optional[Dict[str, Any]] = None) -> LoreGraph: ...
def portability(
    data: AnalysisInput,
    options: Optional[Dict[str, Any]] = None,
    *,
    apps: Optional[List[str]] = None,
) -> List[PortabilityFinding]: ...

# The generation types of the ``trigger`` option (SillyTavern's World Info "Triggers").
Trigger = Literal["normal", "continue", "impersonate", "swipe", "regenerate", "quiet"]

class ActivatedEntry(TypedDict):
    """An activated entry, as in ``ccv3 lore scan --json``."""

    book: str
    index: int
    name: Optional[str]
    content: str
    position: str
    position_default: NotRequired[bool]
    depth: NotRequired[Optional[int]]
    role: NotRequired[Optional[str]]
    reason: str
    step: NotRequired[int]

class RejectedEntry(TypedDict):
    """An entry that did not activate, as in ``ccv3 lore scan --json``."""

    book: str
    index: int
    name: Optional[str]
    reason: str

class ScanResult(TypedDict):
    """The result of :func:`scan_lorebook`: pass ``state`` to the next turn."""

    activated: List[ActivatedEntry]
    rejected: List[RejectedEntry]
    tokens: int
    state: ScanState

# A lorebook (a dict), or file bytes or a path (a card file means its character book).
BookInput = Union[LorebookInput, Data]

def scan_lorebook(
    books: Union[Iterable[BookInput], "CompiledLorebooks"],
    chat: Chat,
    state: Optional[Json] = None,
    seed: Optional[int] = None,
    *,
    min_activations: Optional[int] = None,
    min_activations_depth_max: Optional[int] = None,
    max_recursion_steps: Optional[int] = None,
    budget: Optional[int] = None,
    budget_cap: Optional[int] = None,
    include_names: Optional[bool] = None,
    whole_words: Optional[bool] = None,
    case_sensitive: Optional[bool] = None,
    group_scoring: Optional[bool] = None,
    trigger: Optional[Trigger] = None,
    persona: Optional[str] = None,
    **options: Any,
) -> ScanResult: ...
class CompiledLorebooks:
    @property
    def book_names(self) -> List[str]: ...
    def scan(
        self,
        chat: Chat,
        state: Optional[Json] = None,
        seed: Optional[int] = None,
        st_timed: Optional[Json] = None,
        st_activated: Optional[Union[List[str], Dict[str, List[Union[int, str]]]]] = None,
    ) -> ScanResult: ...

# The `dialect` option of scan_lorebook, build_prompt and expand_macros (issue 17): whose
# macros the texts use; "auto" (the default) takes the card's application.
_Dialect = Literal["auto", "risu", "sillytavern", "spec"]

def compile_lorebooks(
    books: Iterable[BookInput],
    *,
    min_activations: Optional[int] = None,
    min_activations_depth_max: Optional[int] = None,
    max_recursion_steps: Optional[int] = None,
    budget: Optional[int] = None,
    budget_cap: Optional[int] = None,
    include_names: Optional[bool] = None,
    whole_words: Optional[bool] = None,
    case_sensitive: Optional[bool] = None,
    group_scoring: Optional[bool] = None,
    trigger: Optional[Trigger] = None,
    persona: Optional[str] = None,
    **options: Any,
) -> CompiledLorebooks: ...

class PromptMessage(TypedDict):
    role: str
    content: str

class PromptLore(TypedDict):
    """A lorebook insertion of the assembled prompt."""

    label: str
    position: str
    slot: str
    role: str
    tokens: int
    position_default: NotRequired[bool]

class PromptCut(TypedDict):
    """Something the context budget cut."""

    kind: str
    label: str
    tokens: int
    reason: str

class PromptResult(TypedDict):
    """The result of :func:`build_prompt`: ``ccv3 prompt --json`` plus ``state``."""

    messages: List[PromptMessage]
    tokens: int
    lore: List[PromptLore]
    cut: List[PromptCut]
    over_limit: NotRequired[int]
    # The prompt as one text, with the ``instruct`` option.
    text: NotRequired[str]
    state: ScanState

def build_prompt(
    card: Union[CardInput, Data],
    chat: Chat,
    *,
    min_activations: Optional[int] = None,
    min_activations_depth_max: Optional[int] = None,
    max_recursion_steps: Optional[int] = None,
    budget: Optional[int] = None,
    budget_cap: Optional[int] = None,
    include_names: Optional[bool] = None,
    whole_words: Optional[bool] = None,
    case_sensitive: Optional[bool] = None,
    group_scoring: Optional[bool] = None,
    trigger: Optional[Trigger] = None,
    persona: Optional[str] = None,
    **options: Any,
) -> PromptResult: ...
def expand_macros(text: str, **context: Any) -> str: ...
def count_tokens(text: str, encoding: Literal["o200k", "cl100k", "estimate"] = "o200k") -> int: ...
