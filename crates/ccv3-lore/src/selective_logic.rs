//! SillyTavern's selective logic for secondary keys.

/// SillyTavern's selective logic for secondary keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SelectiveLogic {
    /// 0: any secondary key must match.
    #[default]
    AndAny,
    /// 1: not all secondary keys may match.
    NotAll,
    /// 2: no secondary key may match.
    NotAny,
    /// 3: all secondary keys must match.
    AndAll,
}

impl SelectiveLogic {
    /// `AND_ANY`, `NOT_ALL`, `NOT_ANY` or `AND_ALL`.
    pub fn as_str(self) -> &'static str {
        match self {
            SelectiveLogic::AndAny => "AND_ANY",
            SelectiveLogic::NotAll => "NOT_ALL",
            SelectiveLogic::NotAny => "NOT_ANY",
            SelectiveLogic::AndAll => "AND_ALL",
        }
    }
}
