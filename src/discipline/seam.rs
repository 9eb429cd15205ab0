//! The seam between the generic machinery of the bot disciplines (the
//! referee, the contest run, the site, the mails, the kit) and what is
//! specific to one discipline: [`BotDiscipline`], implemented once per
//! discipline in its folder (`src/discipline/NAME/mod.rs`) and listed in
//! [`super::registry`]: a discipline is its folder and one line there (or
//! one `registry::register` call: the tests' rock-paper-scissors).
//!
//! Behind the seam is everything a contest of the discipline needs: its
//! data ([`super::data`]: setup, outcome and results as its own serde
//! types), its configuration section and its checks, its game and replay
//! (and a game outside a contest: `knobeln play`'s setup and material),
//! its planner (which games, in which order, and the table from their
//! results; the order of a pairing's games by its key's fields), its
//! trial for a new bot, its texts (tables, transcripts' headers, the
//! site's grid and notes), its picture, its kit, and its scripted players
//! for the site's benchmark. The generic code never
//! names a discipline; what it asks is in this trait.
//!
//! What is not here: KNOBELN, whose players are strategies (WebAssembly
//! modules played in rounds of groups and the Evolution by the engine),
//! not bots; what every discipline answers, KNOBELN's included, is
//! [`super::family::Family`].

use std::sync::Arc;

use crate::discipline::data::Results;
use crate::discipline::data::{Data, DataKind};
use crate::discipline::game::{Outcome, Played, ScriptedGame, Setup, Transcript};
use crate::discipline::table::{OpponentRow, OpponentTable};
use crate::discipline::transcript::moves::Moves;
use crate::discipline::{BotLimitsConfig, Discipline, Sections};
use crate::game::lines::Exchange;
use crate::lang::build::BotProgram;
use crate::lang::Toolchain;
use crate::lines::MatchError;
use crate::lines::{LineLimits, Match};
use crate::sandbox::folder::FolderImage;
use crate::tournament::TeamId;

/// What the trial found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialReport {
    /// No failure of the bot, and the entry condition met.
    pub passed: bool,
    /// Lines for the report, one finding each.
    pub lines: Vec<String>,
}

/// The server could not play the trial.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error("the demo bot {0} could not be built: {1}")]
    DemoBot(String, String),
    #[error(transparent)]
    Match(#[from] MatchError),
    #[error("building the demo bot: {0}")]
    Jail(#[from] crate::sandbox::jail::JailError),
}

/// A demo bot: its file name (the extension says the language) and source.
#[derive(Debug, Clone, Copy)]
pub struct DemoBot {
    pub file: &'static str,
    pub source: &'static str,
}

/// What a discipline's planner knows of its contest.
#[derive(Clone, Copy)]
pub struct ContestView<'a> {
    /// The contest's seed (chance of the planner and the games).
    pub seed: u64,
    /// The teams with a bot, in entry order.
    pub teams: &'a [TeamId],
    /// A team's name.
    pub names: &'a dyn Fn(TeamId) -> String,
    /// The named texts the contest took at its start ([`BotDiscipline::
    /// materials`]: the flooding island's islands), in order.
    pub materials: &'a [(String, String)],
    /// The disciplines' configuration sections.
    pub sections: &'a Sections<'a>,
}

/// A game the planner wants played: its key (JSON, its identity in the
/// contest), its teams in seat order, its setup.
#[derive(Debug, Clone)]
pub struct PlannedGame {
    pub key: String,
    pub seats: Vec<TeamId>,
    pub setup: Setup,
}

/// A stored game's setup and material's name from its key
/// ([`BotDiscipline::stored_setups`]).
pub type SetupOfKey = Box<dyn Fn(&str) -> Result<(Setup, String), String> + Send + Sync>;

/// The same setup for every game (a discipline whose games differ only in
/// their players).
pub fn same_setup(setup: Setup) -> SetupOfKey {
    Box::new(move |_| Ok((setup.clone(), String::new())))
}

/// Whether a contest is still playing or done, for what a table may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContestState {
    Running,
    Finished,
}

/// A discipline's planner for one pass of the contest run over its
/// stored games ([`BotDiscipline::planner`]). It keeps only what its rules
/// need of each stored game (which games are stored, as a bitset over the
/// games' places in the plan, and the sums the table needs), not every
/// result: its memory is flat in the number of games, whatever the field
/// plays (the ultimatum game's 3.98 million matches at the seed's size).
/// Pure: no I/O; the contest run reads the store and feeds it.
pub trait Planner {
    /// Counts a stored game: its key and its planner result (JSON,
    /// [`BotDiscipline::planner_result`]). Called once per stored game, in
    /// any order (a run resumed after a crash feeds what was stored before
    /// it). A key added twice, or one not of the plan, is refused.
    fn add(&mut self, key: &str, result: &str) -> Result<(), String>;

    /// Up to `limit` games not stored yet, in playing order (the same
    /// order whatever `limit`): the first pass, then what the results
    /// call for (FootSteps' tie replays; the ultimatum game with kept
    /// folders: one phase at a time), none twice (the contest run refuses
    /// a batch with a game twice). A game handed out but not stored yet
    /// may be handed out again. Empty once the contest is complete (or
    /// for a `limit` of 0, which changes nothing).
    fn next_games(&mut self, limit: usize) -> Result<Vec<PlannedGame>, String>;

    /// The results table from the games added so far; `None` while the
    /// discipline shows none (the ultimatum game before its end; FootSteps
    /// before its tie replays are done).
    fn results(&self, state: ContestState) -> Result<Option<Results>, String>;
}

/// Which of a plan's games are stored: one bit per game, by its place in
/// the plan, and a cursor before which every game is stored (so that
/// handing out the next games does not walk the stored ones again).
#[derive(Debug, Clone, Default)]
pub struct StoredSet {
    bits: Vec<u64>,
    games: u64,
    stored: u64,
    /// Every game before it is stored.
    first_missing: u64,
}

impl StoredSet {
    /// None of `games` stored.
    pub fn new(games: u64) -> StoredSet {
        StoredSet {
            bits: vec![0; games.div_ceil(64) as usize],
            games,
            stored: 0,
            first_missing: 0,
        }
    }

    /// The games of the plan.
    pub fn games(&self) -> u64 {
        self.games
    }

    /// How many are stored.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// Whether game `i` is stored.
    pub fn contains(&self, i: u64) -> bool {
        i < self.games && self.bits[(i / 64) as usize] & (1 << (i % 64)) != 0
    }

    /// Marks game `i` stored; `Err` in words for one outside the plan or
    /// stored already.
    pub fn insert(&mut self, i: u64) -> Result<(), String> {
        if i >= self.games {
            return Err(format!("game {i} of a plan of {} games", self.games));
        }
        let (word, bit) = ((i / 64) as usize, 1u64 << (i % 64));
        if self.bits[word] & bit != 0 {
            return Err(format!("game {i} of the plan is stored twice"));
        }
        self.bits[word] |= bit;
        self.stored += 1;
        Ok(())
    }

    /// The first game not stored at or after `from` (`games()`: none).
    pub fn next_missing(&mut self, from: u64) -> u64 {
        while self.first_missing < self.games && self.contains(self.first_missing) {
            self.first_missing += 1;
        }
        let mut i = from.max(self.first_missing);
        while i < self.games {
            let word = self.bits[(i / 64) as usize] >> (i % 64);
            if word == u64::MAX >> (i % 64) {
                i = (i / 64 + 1) * 64; // the rest of this word is stored
                continue;
            }
            if word & 1 == 0 {
                return i;
            }
            i += 1;
        }
        self.games
    }

    /// The first game not stored (`games()`: none).
    pub fn first_missing(&self) -> u64 {
        (self.first_missing..self.games)
            .find(|&i| !self.contains(i))
            .unwrap_or(self.games)
    }

    /// Up to `limit` places of games not stored, from the first on.
    pub fn missing(&mut self, limit: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut i = self.next_missing(0);
        while i < self.games && out.len() < limit {
            out.push(i);
            i = self.next_missing(i + 1);
        }
        out
    }
}

/// What a team may send beside its bot, with its own mail subject: the
/// flooding island's island ("Jeder Wettbewerbsteilnehmer darf zusätzlich
/// eine Insel erstellen und einreichen"). A team's latest accepted one
/// replaces its earlier one; the contest takes them at its start
/// ([`BotDiscipline::materials`]'s `sent`).
#[derive(Debug, Clone, Copy)]
pub struct Submission {
    /// The subject of the mail that sends one (`island`): one lower-case
    /// word, which no other command takes.
    pub word: &'static str,
    /// What it is, for sentences ("island").
    pub what: &'static str,
    /// Its plural, for sentences ("islands"): a word of its own, since
    /// not every English plural adds an s ("mottoes", "matrices").
    pub whats: &'static str,
    /// The help mail's lines for it, aligned as the help's command list.
    pub help: &'static str,
    /// How to write one: the hint of every refusal.
    pub format: &'static str,
    /// Why a mail holds none (its `find` found nothing), a sentence.
    pub missing: &'static str,
    /// Its text in a mail's text (the body, or one attachment), if any.
    pub find: fn(&str) -> Option<String>,
    /// Checks a found text: what is stored and the report's lines, or why
    /// it is refused (a sentence without its final full stop).
    pub check: fn(&str) -> Result<Checked, String>,
}

/// A submission that passed its check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The text to store (normalized).
    pub text: String,
    /// The accepting mail's lines about it.
    pub report: String,
}

/// A built bot as a seat of a game.
pub type Seat<'a> = (&'a Toolchain, &'a BotProgram);

/// What is specific to one bot discipline.
pub trait BotDiscipline: Sync {
    /// Which discipline this is ([`Discipline::named`] with its name).
    fn discipline(&self) -> Discipline;

    /// The type implementing the seam (the registry tells two seams of
    /// one name apart by it).
    fn seam_type(&self) -> std::any::TypeId
    where
        Self: 'static,
    {
        std::any::TypeId::of::<Self>()
    }

    /// Its name in mails and on the site ("the ultimatum game").
    fn title(&self) -> &'static str;

    /// How many bots a game seats (the flooding island: one).
    fn seats(&self) -> usize {
        2
    }

    /// Reads back its data of `kind` from its JSON form (the tag taken
    /// off): each discipline decodes into its own type
    /// ([`super::data::decode_as`]), checking what it needs (an island is
    /// parsed again).
    fn decode(&self, kind: DataKind, value: serde_json::Value) -> Result<Arc<dyn Data>, String>;

    // --- configuration -------------------------------------------------

    /// Its section of the configuration, as JSON (stored with a started
    /// contest; the kit's rules are rendered from it).
    fn section(&self, sections: &Sections<'_>) -> serde_json::Value;

    /// Whether its section is valid, with what it depends on beyond it
    /// ([`Sections::workers`]: the ultimatum game's kept folders must fit
    /// a NATS message). The configuration asks every registered
    /// discipline, whatever its contest plays (a broken `[flooding]` is
    /// refused in a KNOBELN contest too), so a section the configuration
    /// lacks (a registered discipline's table) must be valid: its defaults.
    fn validate(&self, _sections: &Sections<'_>) -> Result<(), String> {
        Ok(())
    }

    /// The limits every bot of its games plays under.
    fn limits(&self, sections: &Sections<'_>) -> BotLimitsConfig;

    /// Whether a bot's working folder lasts from one game to its next (the
    /// ultimatum game's FAQ); the planner then orders each bot's games.
    fn keeps_folders(&self, _sections: &Sections<'_>) -> bool {
        false
    }

    // --- a game --------------------------------------------------------

    /// What its games are played on, when each is played on a material
    /// the player may choose (the flooding island: "island"):
    /// `knobeln play --material FILE` then reads one. `None`: a game takes
    /// none, and `--material` is refused.
    fn material_name(&self) -> Option<&'static str> {
        None
    }

    /// The setup of one game outside a contest (`knobeln play`): its
    /// section's parameters, the game's seed, and the text of the material
    /// it is played on when [`BotDiscipline::material_name`] says it takes
    /// one (`None`: its default, the kit's first island). `Err` in
    /// sentences (a damaged material).
    fn play_setup(
        &self,
        sections: &Sections<'_>,
        seed: u64,
        material: Option<&str>,
    ) -> Result<Setup, String>;

    /// Plays one game of `setup` on the started match `m`.
    fn play(&self, setup: &Setup, m: Match, transcript: Transcript) -> Result<Played, MatchError>;

    /// Plays one game of `setup` between `bots` (seat order) under
    /// `limits`, each bot's `/work` its kept folder when `folders` gives
    /// one per seat: starts the match ([`Match::start_with_folders`]),
    /// hands it to [`BotDiscipline::play`] and notes the wall clock of the
    /// whole game. `Err` only for the server's own faults.
    fn play_bots(
        &self,
        setup: &Setup,
        bots: &[Seat<'_>],
        limits: LineLimits,
        transcript: Transcript,
        folders: Option<&[FolderImage]>,
    ) -> Result<Played, MatchError> {
        assert_eq!(bots.len(), setup.seats(), "seats of the game");
        if let Some(f) = folders {
            assert_eq!(f.len(), bots.len(), "a folder per seat");
        }
        let start = std::time::Instant::now();
        let m = Match::start_with_folders(bots, limits, folders)?;
        let played = self.play(setup, m, transcript)?;
        Ok(Played {
            wall_ms: start.elapsed().as_millis() as u64,
            ..played
        })
    }

    /// The full transcript of a game from its moves (replayed by the rules).
    fn expand(&self, setup: &Setup, moves: &Moves) -> Vec<Exchange>;

    /// Whether an outcome a worker sent can be one of `setup` with `seats`
    /// bots (seats named exist, counts within the rules' bounds).
    fn check_outcome(&self, setup: &Setup, outcome: &Outcome, seats: usize) -> Result<(), String>;

    /// The outcome in sentences, one per line (for the terminal, the site's
    /// game rows and the mails); players named by `names` (else "player N").
    fn outcome_text(&self, outcome: &Outcome, names: &[String]) -> String;

    /// The setup's parameter lines of a transcript's header (without
    /// `# `); `subject` is the name of the material it was played on.
    fn setup_lines(&self, setup: &Setup, subject: &str) -> Vec<String>;

    // --- the contest ---------------------------------------------------

    /// The named texts a contest of it takes at its start, from the
    /// configuration, the seed and what the teams sent (`sent`: team name,
    /// text): the flooding island's islands. Empty for the others.
    fn materials(
        &self,
        _sections: &Sections<'_>,
        _seed: u64,
        _sent: &[(String, String)],
    ) -> Result<Vec<(String, String)>, String> {
        Ok(Vec::new())
    }

    /// What a team may send beside its bot (the flooding island's
    /// island); none for most.
    fn submission(&self) -> Option<Submission> {
        None
    }

    /// The contest's planner ([`Planner`]): fed the stored games one at a
    /// time, it hands out the games still to play in bounded batches
    /// (every game of the first pass not stored, then FootSteps' tie
    /// replays the results call for) and makes the results table.
    fn planner<'a>(&self, view: &ContestView<'a>) -> Result<Box<dyn Planner + 'a>, String>;

    /// What the planner needs of a played game (stored beside it).
    fn planner_result(
        &self,
        sections: &Sections<'_>,
        key: &str,
        seats: &[TeamId],
        played: &Played,
    ) -> serde_json::Value;

    /// What makes a stored game's setup from its key (the contest's
    /// parameters, and for the flooding island the island and seed of the
    /// run) with the name of the material it was played on (else empty):
    /// made once per pass over the stored games, so what the contest's
    /// data costs to read (an island parsed) is paid once, not per game.
    fn stored_setups(&self, view: &ContestView<'_>) -> Result<SetupOfKey, String>;

    /// A stored game's teams in seat order from its key (games stored
    /// before their seats were).
    fn key_seats(&self, key: &str, teams: &[TeamId]) -> Result<Vec<TeamId>, String>;

    /// The numeric fields of its game key (JSON), in the order a pairing's
    /// games are listed on its page and in the mails (run 2 before run
    /// 10); games equal in them follow by the key as text. Plain names
    /// (letters, digits, `_`, not first a digit), else the store refuses
    /// to list the games. Empty: by the key alone (one game per pairing).
    fn key_order(&self) -> &'static [&'static str] {
        &[]
    }

    /// Which repetition of its pairing a game is (0 for the first): the
    /// first `[site] transcripts_per_pairing` keep their transcript.
    fn repetition(&self, _key: &str) -> u32 {
        0
    }

    /// At most how many games a team is seated in that keep their
    /// transcript (the first `kept_per_pairing` repetitions of each of its
    /// pairings), in a contest of `teams` entries and `materials`
    /// materials: among them a team's transcript budget is shared
    /// (`crate::store::bots::TranscriptBudget`), so an upper bound, never
    /// less. Two seats by default: at most one game per ordered pair of
    /// teams (a team against itself included) and repetition.
    fn kept_games_per_team(
        &self,
        _sections: &Sections<'_>,
        teams: usize,
        _materials: usize,
        kept_per_pairing: u32,
    ) -> u64 {
        2 * teams as u64 * u64::from(kept_per_pairing)
    }

    /// The page a game is listed on: the two teams (lower id first); a
    /// one-seat discipline's own (the flooding island: team and island).
    fn pairing(&self, _key: &str, seats: &[TeamId]) -> String {
        match seats {
            [a, b] => format!("{}-{}", a.0.min(b.0), a.0.max(b.0)),
            [a] => a.0.to_string(),
            _ => String::new(),
        }
    }

    /// Counts a stored game (`result`: its planner result) into the row of
    /// the bot at `seat` (team `team`) for its pairing.
    fn count(&self, row: &mut OpponentRow, result: &str, seat: usize, team: TeamId);

    /// Completes a bot's row once every game is counted (the ultimatum
    /// game: the two orders of a pairing decided).
    fn finish_row(&self, _row: &mut OpponentRow) {}

    /// Whom a one-seat game's row is against: its material's name.
    fn against(&self, subject: &str) -> String {
        subject.to_string()
    }

    // --- texts ---------------------------------------------------------

    /// The results table as text (7-bit, at most 72 columns).
    fn results_text(&self, results: &Results) -> String;

    /// The ranking as headers and rows of cells for the site (column 1 is
    /// the bot's name).
    fn table_rows(&self, results: &Results) -> (Vec<String>, Vec<Vec<String>>);

    /// The per-opponent table of one bot.
    fn opponent_table(&self, results: &Results, rows: &[OpponentRow]) -> OpponentTable;

    /// What the grid of the results page shows in a cell ("won-drawn-lost
    /// …"), as the end of a sentence.
    fn grid_sentence(&self) -> &'static str {
        "its games won-drawn-lost"
    }

    /// The grid's cell of a pairing (HTML: escaped by the discipline).
    fn grid_cell(&self, _results: &Results, row: &OpponentRow) -> String {
        format!("{}-{}-{}", row.won, row.drawn, row.lost)
    }

    /// HTML of the results page right after the ranking (its notes).
    fn after_ranking_html(&self, _results: &Results) -> String {
        String::new()
    }

    /// HTML of the results page after the grid (FootSteps' pair table);
    /// `names` gives a team's name, pairings link as `pairing/LO-HI.html`.
    fn after_grid_html(&self, _results: &Results, _names: &dyn Fn(TeamId) -> String) -> String {
        String::new()
    }

    /// HTML after the grid (a note on its cells).
    fn grid_note_html(&self, _results: &Results) -> String {
        String::new()
    }

    /// A one-seat discipline's grid: (heading, sentence, corner word, cell
    /// of a row) over its materials; `None` for the bot-against-bot grid.
    fn material_grid(&self) -> Option<MaterialGrid> {
        None
    }

    /// The folder of the site its materials are published in after the
    /// contest (`island/K.txt`), and the results page's section on them
    /// (HTML, linking `FOLDER/K.txt`, K from 1).
    fn published_materials(
        &self,
        _materials: &[(String, String)],
    ) -> Option<(&'static str, String)> {
        None
    }

    /// The title of a pairing's page; `names` are its teams' names in
    /// seat order, `subject` its material's name.
    fn pairing_title(&self, names: &[String], subject: &str) -> String {
        let _ = subject;
        let mut who = names.to_vec();
        who.sort();
        who.dedup();
        if who.len() == 1 {
            format!("{} against itself", who[0])
        } else {
            who.join(" and ")
        }
    }

    /// A short note under a game's name on its pairing's page (the
    /// flooding island's seed: the kit's referee replays the run with it).
    fn game_note(&self, _setup: &Setup) -> Option<String> {
        None
    }

    /// How the replay of the site names a player ("player 1", the
    /// flooding island's "the bot") and counts steps: (unit, whether the
    /// picture has frames, how a line's number is found).
    fn replay_terms(&self) -> ReplayTerms {
        ReplayTerms {
            unit: "move",
            frames: false,
            numbering: Numbering::Printed,
            solo_name: "the bot",
        }
    }

    /// The per-opponent summary's subject word: "opponent" (the flooding
    /// island: "island").
    fn per_what(&self) -> &'static str {
        "opponent"
    }

    /// The picture of a game for its page on the site (HTML and SVG).
    fn picture(&self, setup: &Setup, transcript: &[Exchange], names: &[String]) -> String;

    // --- the compile service ---------------------------------------------

    /// The trial a new bot plays (its verdict in sentences).
    fn trial(
        &self,
        sections: &Sections<'_>,
        bot: Seat<'_>,
        seed: u64,
    ) -> Result<TrialReport, TrialError>;

    /// How often a team may improve its bot after its first accepted
    /// version, where the seed caps it (the flooding island: five).
    fn revisions(&self, _sections: &Sections<'_>) -> Option<u32> {
        None
    }

    // --- the kit -------------------------------------------------------

    /// The kit's home referee: one Python 3 file.
    fn referee_py(&self) -> &'static str;

    /// The kit's `RULES.txt` template (a handlebars text).
    fn rules_template(&self) -> RulesTemplate;

    /// The demo bots (C and Python at least), from its folder's `demo/`.
    fn demo_bots(&self) -> &'static [DemoBot];

    /// The data of the kit's `RULES.txt` and `README` beyond the contest's
    /// (names, dates, languages): the section, and what the rules quote.
    fn kit_data(&self, sections: &Sections<'_>) -> serde_json::Value {
        self.section(sections)
    }

    /// Files of the kit beyond README, rules, referee and demo bots (the
    /// flooding island's islands): (file name, text).
    fn kit_files(&self, _sections: &Sections<'_>) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The command line the kit's README shows for one home game (after
    /// `python3 referee.py`).
    fn kit_example_args(&self) -> &'static str {
        "./mybot ./otherbot"
    }

    /// The demo contest's name (`knobeln demo --discipline`).
    fn demo_contest_name(&self) -> &'static str {
        "demo contest"
    }

    // --- the site's benchmark ------------------------------------------

    /// Its scripted trivial players (`knobeln bench bot-site`); `None`:
    /// the benchmark cannot fill a contest of it.
    fn scripted_players(&self) -> Option<ScriptedPlayers> {
        None
    }
}

/// A discipline's scripted trivial players for the site's benchmark
/// (`knobeln bench bot-site`): games played by its rules alone, no
/// process ([`crate::discipline::game::scripted`]), one per setup, stored
/// for every planned game of that setup.
#[derive(Debug, Clone, Copy)]
pub struct ScriptedPlayers {
    /// A game of the setup between the scripted players.
    pub play: fn(&Setup) -> ScriptedGame,
    /// The outcome stored for the `k`-th game from the one played, so that
    /// the field looks real (FootSteps: the winner alternates, or every
    /// pair would tie and call for replays); [`same_outcome`] keeps it.
    pub vary: fn(&Outcome, usize) -> Outcome,
    /// The key of its section that says how often each pairing is played
    /// (the benchmark's `--repetitions`); `None`: once.
    pub repetitions_key: Option<&'static str>,
}

/// Whether a field of [`BotDiscipline::key_order`] is a plain name: ASCII
/// letters, digits and `_`, not first a digit, at least one (it reaches
/// the store's SQL; `registry::register` refuses a seam with another).
pub fn plain_key_field(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The outcome played, for every game ([`ScriptedPlayers::vary`]).
pub fn same_outcome(outcome: &Outcome, _k: usize) -> Outcome {
    outcome.clone()
}

/// Where a discipline's kit `RULES.txt` template comes from.
#[derive(Debug, Clone, Copy)]
pub enum RulesTemplate {
    /// A file of `templates/kit/`, by name.
    Named(&'static str),
    /// The text itself (a discipline outside the product's templates).
    Text(&'static str),
}

/// A one-seat discipline's grid of the results page.
#[derive(Debug, Clone, Copy)]
pub struct MaterialGrid {
    pub heading: &'static str,
    pub sentence: &'static str,
    pub corner: &'static str,
    /// The cell of a bot's row for one material.
    pub cell: fn(&OpponentRow) -> String,
    /// The pairing (as [`BotDiscipline::pairing`] names it) of a team's
    /// games on the material at index `k`.
    pub pairing: fn(TeamId, usize) -> String,
}

/// How the site's replay counts and names.
#[derive(Debug, Clone, Copy)]
pub struct ReplayTerms {
    /// What a step's number counts: `move`, `round` or `turn`.
    pub unit: &'static str,
    /// Whether the picture has frames `step-N` to show.
    pub frames: bool,
    pub numbering: Numbering,
    /// How a one-seat game names its bot.
    pub solo_name: &'static str,
}

/// How a bot's printed line is numbered in the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    /// By the round the referee announced last (`ROUND z`, `RUNDE r`).
    Round,
    /// One number per line of each seat in turn (FootSteps' turns).
    Turns,
    /// Lines counted, the first `skip` not (Morabaraba's two names).
    PrintedAfter(u32),
    /// Lines counted.
    Printed,
}
