//! A discipline's own data, carried by the generic machinery without
//! knowing its type: [`Data`] (anything a discipline defines that has a
//! serde form) and [`Tagged`], which pairs it with its [`Discipline`] and
//! is stored and sent as one JSON object: the data's own fields and a tag
//! field naming the discipline (`{"game": "ultimatum", "rounds": 2500}`;
//! the same form the closed enums of earlier versions wrote, so stored
//! games and workers of the same wire version read alike).
//!
//! Reading one back asks the discipline named by the tag to decode the
//! rest ([`super::seam::BotDiscipline::decode`]; the `Deserialize` impl is
//! the registry's, which knows the disciplines), so a value of a
//! discipline always holds that discipline's own type: a folder reads its
//! data with [`Tagged::get`], typed, never matching on other disciplines.
//!
//! What it deliberately does not do: define any discipline's data (each
//! folder does), or know which disciplines exist ([`super::registry`]).

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Discipline;

/// A discipline's data of one kind (a setup, an outcome, a results table):
/// any `Serialize` type of its folder that serializes as a JSON object (a
/// struct with named fields; `struct NoParameters {}` for none) without a
/// field named as the tag (`game`, `discipline`).
pub trait Data: Any + Send + Sync + fmt::Debug {
    /// Its serde form (a JSON object).
    fn to_json(&self) -> serde_json::Value;
    /// Itself, to be read back as its type.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Serialize + Any + Send + Sync + fmt::Debug> Data for T {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a discipline's data has a JSON form")
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Which of a discipline's data a [`Tagged`] holds, with the name of the
/// field that carries the discipline in its JSON form.
pub trait Kind: 'static {
    /// The tag field (`game` for a setup, `discipline` for the others).
    const TAG: &'static str;
    /// What it is, for messages ("setup", "outcome", "results").
    const WHAT: &'static str;
    /// What a seam decodes it as; `None` for data never read back (a
    /// results table: written for people, made from the stored games).
    const KIND: Option<DataKind>;
}

/// The kinds of data a discipline decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    Setup,
    Outcome,
}

/// A discipline's data, with the discipline it belongs to. Cheap to clone
/// (shared); compared by discipline and JSON form.
pub struct Tagged<K: Kind> {
    discipline: Discipline,
    data: Arc<dyn Data>,
    kind: PhantomData<K>,
}

/// The result table of a bot contest, as its discipline's own type.
pub type Results = Tagged<ResultsKind>;

impl<K: Kind> Tagged<K> {
    /// `data` of discipline `d`: each folder makes its own (`data`'s type
    /// is the one its [`super::seam::BotDiscipline::decode`] reads back).
    pub fn new<T: Data>(d: Discipline, data: T) -> Self {
        Tagged {
            discipline: d,
            data: Arc::new(data),
            kind: PhantomData,
        }
    }

    /// The discipline it is data of.
    pub fn discipline(&self) -> Discipline {
        self.discipline
    }

    /// The data as its discipline's type `T`.
    ///
    /// **Invariant:** a value of discipline `d` holds `d`'s own type (made
    /// by `d`'s folder or decoded by `d`'s seam), so `d`'s folder reading
    /// it with its type cannot fail; a mismatch is a bug of the folder and
    /// panics with both names.
    pub fn get<T: Any>(&self) -> &T {
        self.data.as_any().downcast_ref::<T>().unwrap_or_else(|| {
            panic!(
                "a {} of {} read as {}",
                K::WHAT,
                self.discipline,
                std::any::type_name::<T>()
            )
        })
    }

    /// The data as `T` when it is one (for code that serves several kinds).
    pub fn try_get<T: Any>(&self) -> Option<&T> {
        self.data.as_any().downcast_ref::<T>()
    }

    /// Data decoded by `d`'s seam (reading a stored or sent value back:
    /// the registry's `Deserialize`).
    pub(crate) fn decoded(d: Discipline, data: Arc<dyn Data>) -> Self {
        Tagged {
            discipline: d,
            data,
            kind: PhantomData,
        }
    }

    /// The JSON form of the data alone (without the tag).
    pub fn body(&self) -> serde_json::Value {
        self.data.to_json()
    }
}

impl<K: Kind> Clone for Tagged<K> {
    fn clone(&self) -> Self {
        Tagged {
            discipline: self.discipline,
            data: self.data.clone(),
            kind: PhantomData,
        }
    }
}

impl<K: Kind> fmt::Debug for Tagged<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({:?})", self.discipline, self.data)
    }
}

impl<K: Kind> PartialEq for Tagged<K> {
    fn eq(&self, other: &Self) -> bool {
        // Clones share their data: equal without writing it out.
        self.discipline == other.discipline
            && (Arc::ptr_eq(&self.data, &other.data) || self.body() == other.body())
    }
}

impl<K: Kind> Eq for Tagged<K> {}

impl<K: Kind> Serialize for Tagged<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut body = match self.data.to_json() {
            serde_json::Value::Object(m) => m,
            serde_json::Value::Null => serde_json::Map::new(),
            other => {
                let mut m = serde_json::Map::new();
                m.insert("value".into(), other);
                m
            }
        };
        body.insert(K::TAG.into(), self.discipline.name().into());
        body.serialize(s)
    }
}

/// Decodes `value` as `T` for a seam's [`super::seam::BotDiscipline::decode`].
pub fn decode_as<T>(value: serde_json::Value) -> Result<Arc<dyn Data>, String>
where
    T: Data + for<'de> Deserialize<'de>,
{
    serde_json::from_value::<T>(value)
        .map(|t| Arc::new(t) as Arc<dyn Data>)
        .map_err(|e| e.to_string())
}

/// The setup's kind: tag `game`.
#[derive(Debug)]
pub struct SetupKind;
impl Kind for SetupKind {
    const TAG: &'static str = "game";
    const WHAT: &'static str = "setup";
    const KIND: Option<DataKind> = Some(DataKind::Setup);
}

/// The outcome's kind: tag `discipline`.
#[derive(Debug)]
pub struct OutcomeKind;
impl Kind for OutcomeKind {
    const TAG: &'static str = "discipline";
    const WHAT: &'static str = "outcome";
    const KIND: Option<DataKind> = Some(DataKind::Outcome);
}

/// The results table's kind: tag `discipline`.
#[derive(Debug)]
pub struct ResultsKind;
impl Kind for ResultsKind {
    const TAG: &'static str = "discipline";
    const WHAT: &'static str = "results table";
    const KIND: Option<DataKind> = None;
}
