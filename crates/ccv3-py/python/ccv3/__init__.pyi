"""Type stubs of the ccv3 package."""

import os
from typing import Any, Dict, Iterable, Iterator, List, Literal, Optional, Tuple, TypedDict, Union

from typing_extensions import NotRequired

__version__: str

Json = Any
PathLike = Union[str, "os.PathLike[str]"]
Data = Union[bytes, bytearray, memoryview, PathLike]
Card = Dict[str, Any]
Lorebook = Dict[str, Any]
Message = Dict[str, Any]

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
def serialize_decorators(decorators: List[Decorator], content: str) -> str: ...
def write_card(
    card: Card, format: Literal["png", "charx", "json", "json-v2"] = "png", image: Optional[Data] = None
) -> bytes: ...
def write_lorebook(book: Lorebook, format: Optional[Literal["lorebook_v3", "worldinfo"]] = None) -> bytes: ...
def validate_card(data: Union[Card, Data]) -> List[Diagnostic]: ...
def validate_lorebook(data: Union[Lorebook, Data]) -> List[Diagnostic]: ...
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

def lint_card(
    data: Union[Card, Data],
    options: Optional[LintOptions] = None,
    *,
    app: Optional[str] = None,
    tokenizer: Optional[Literal["o200k", "cl100k", "estimate"]] = None,
    budget: Optional[int] = None,
    max_context: Optional[int] = None,
    budget_cap: Optional[int] = None,
) -> List[LintFinding]: ...
def lint_lorebook(
    data: Union[Lorebook, Data],
    options: Optional[LintOptions] = None,
    *,
    app: Optional[str] = None,
    tokenizer: Optional[Literal["o200k", "cl100k", "estimate"]] = None,
    budget: Optional[int] = None,
    max_context: Optional[int] = None,
    budget_cap: Optional[int] = None,
) -> List[LintFinding]: ...
def lore_graph(data: Union[Card, Lorebook, Data], options: Optional[Dict[str, Any]] = None) -> LoreGraph: ...
def portability(
    data: Union[Card, Lorebook, Data],
    options: Optional[Dict[str, Any]] = None,
    *,
    apps: Optional[List[str]] = None,
) -> List[PortabilityFinding]: ...

# The generation types of the ``trigger`` option (SillyTavern's World Info "Triggers").
Trigger = Literal["normal", "continue", "impersonate", "swipe", "regenerate", "quiet"]

def scan_lorebook(
    books: Union[Iterable[Union[Lorebook, Data]], "CompiledLorebooks"],
    chat: Union[List[Message], str],
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
) -> Dict[str, Any]: ...
class CompiledLorebooks:
    @property
    def book_names(self) -> List[str]: ...
    def scan(
        self,
        chat: Union[List[Message], str],
        state: Optional[Json] = None,
        seed: Optional[int] = None,
        st_timed: Optional[Json] = None,
        st_activated: Optional[Union[List[str], Dict[str, List[Union[int, str]]]]] = None,
    ) -> Dict[str, Any]: ...

# The `dialect` option of scan_lorebook, build_prompt and expand_macros (issue 17): whose
# macros the texts use; "auto" (the default) takes the card's application.
_Dialect = Literal["auto", "risu", "sillytavern", "spec"]

def compile_lorebooks(
    books: Iterable[Union[Lorebook, Data]],
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
def build_prompt(
    card: Union[Card, Data],
    chat: Union[List[Message], str],
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
) -> Dict[str, Any]: ...
def expand_macros(text: str, **context: Any) -> str: ...
def count_tokens(text: str, encoding: Literal["o200k", "cl100k", "estimate"] = "o200k") -> int: ...
