//! The flooding island's chance: the flood-card deck (ten cards, two raise
//! the level) and the draw and discard piles of island fields, each shuffled
//! by a generator the game derives from its seed.
//!
//! What it deliberately does not do: decide when a card is drawn or what a
//! drawn field does (that is the game, [`super::FloodGame`]).

use crate::seed::SplitMix64;

/// Cards in the flood-card deck.
pub const FLOOD_CARDS: usize = 10;
/// Cards of the deck that raise the flood level.
pub const RAISING_CARDS: usize = 2;

/// The flood-card deck: ten cards, two of which raise the level, drawn one a
/// round and all shuffled again when used up.
#[derive(Debug, Clone)]
pub(super) struct FloodDeck {
    /// The cards still to draw; `true` raises the level. Top = last.
    pub(super) cards: Vec<bool>,
}

impl FloodDeck {
    pub(super) fn new() -> Self {
        FloodDeck { cards: Vec::new() }
    }

    /// Draws the next card (shuffling all ten when the deck is used up);
    /// `true` when it raises the level.
    pub(super) fn draw(&mut self, rng: &mut SplitMix64) -> bool {
        if self.cards.is_empty() {
            self.cards = (0..FLOOD_CARDS).map(|i| i < RAISING_CARDS).collect();
            rng.shuffle(&mut self.cards);
        }
        self.cards.pop().expect("a refilled deck")
    }
}

/// The draw pile and the discard pile of island fields (board indices).
#[derive(Debug, Clone)]
pub(super) struct FieldPiles {
    /// Top = last.
    pub(super) draw: Vec<u16>,
    pub(super) discard: Vec<u16>,
}

impl FieldPiles {
    pub(super) fn new(mut fields: Vec<u16>, rng: &mut SplitMix64) -> Self {
        rng.shuffle(&mut fields);
        FieldPiles {
            draw: fields,
            discard: Vec::new(),
        }
    }

    /// The level rose: the discard pile is shuffled and put on top.
    pub(super) fn discard_on_top(&mut self, rng: &mut SplitMix64) {
        rng.shuffle(&mut self.discard);
        self.draw.append(&mut self.discard);
    }

    /// The next field to flood; when the draw pile is empty, the discard
    /// pile is shuffled and becomes the draw pile. `None` when no field is
    /// left at all.
    pub(super) fn draw(&mut self, rng: &mut SplitMix64) -> Option<u16> {
        if self.draw.is_empty() {
            std::mem::swap(&mut self.draw, &mut self.discard);
            rng.shuffle(&mut self.draw);
        }
        self.draw.pop()
    }
}
