//! The worker's program cache: programs by SHA-256, in memory (sealed),
//! on disk, else fetched from the object store; every load from disk or
//! the store is verified against the hash before it is used.
//!
//! Not here: which programs a job needs or playing them (`worker.rs`).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream;
use tokio::io::AsyncReadExt;

use crate::distributed::wire;
use crate::distributed::DistributedError;
use crate::engine::prepare::sha256_hex;
use crate::lang::build::BotProgram;
use crate::wasm::Loaded;

/// The largest KNOBELN program a worker fetches.
const MAX_PROGRAM_BYTES: u64 = 16 << 20;

/// The largest bot program a worker fetches: a bot's program as JSON may
/// be several times its files' 64 MiB (bytes as numbers).
const MAX_BOT_PROGRAM_BYTES: u64 = 320 << 20;

/// How long fetching a program may take: this much, plus a second per
/// MiB. A fetch can otherwise wait forever: when the coordinator puts a
/// program into the store again while a worker reads it, the chunks being
/// read are purged under the reader.
const FETCH_TIME: Duration = Duration::from_secs(30);

/// Programs kept open in memory (each is a sealed memory file).
const MEMORY_CACHE: usize = 256;

/// Bot programs kept in memory (a compiled bot's program may be megabytes;
/// the others are read again from the disk cache).
const MEMORY_CACHE_BOTS: usize = 64;

/// The programs held in memory, and the order they came in (the oldest
/// goes first when there are too many).
pub(super) struct Held<T> {
    by_sha: HashMap<String, Arc<T>>,
    order: VecDeque<String>,
    /// How many are kept at most.
    limit: usize,
}

impl<T> Held<T> {
    pub(super) fn new(limit: usize) -> Held<T> {
        Held {
            by_sha: HashMap::new(),
            order: VecDeque::new(),
            limit,
        }
    }

    pub(super) fn get(&self, sha: &str) -> Option<Arc<T>> {
        self.by_sha.get(sha).cloned()
    }

    pub(super) fn keep(&mut self, sha: &str, program: Arc<T>) {
        self.by_sha.insert(sha.to_string(), program);
        self.order.push_back(sha.to_string());
        while self.order.len() > self.limit {
            if let Some(old) = self.order.pop_front() {
                self.by_sha.remove(&old);
            }
        }
    }
}

/// Programs by SHA-256: in memory (sealed), on disk, else from the object
/// store. Every load from disk or the store is verified against the hash.
pub(super) struct ProgramCache {
    dir: PathBuf,
    bucket: jetstream::object_store::ObjectStore,
    memory: Mutex<Held<Loaded>>,
    bots: Mutex<Held<BotProgram>>,
    loading: tokio::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl ProgramCache {
    pub(super) fn new(
        dir: PathBuf,
        bucket: jetstream::object_store::ObjectStore,
    ) -> Result<ProgramCache, DistributedError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        Ok(ProgramCache {
            dir,
            bucket,
            memory: Mutex::new(Held::new(MEMORY_CACHE)),
            bots: Mutex::new(Held::new(MEMORY_CACHE_BOTS)),
            loading: tokio::sync::Mutex::new(HashMap::new()),
        })
    }

    /// A KNOBELN strategy: its module compiled once for this machine's
    /// engine (kept while it is among the last [`MEMORY_CACHE`]), or why
    /// it cannot play.
    pub(super) async fn get(&self, sha: &str) -> Result<Arc<Loaded>, String> {
        self.get_with(sha, &self.memory, MAX_PROGRAM_BYTES, |bytes| {
            // get_with checked the bytes against `sha`.
            crate::wasm::load_hashed(bytes, sha.to_string())
                .map_err(|e| format!("compiling program {sha}: {e}"))
        })
        .await
    }

    /// A bot's program.
    pub(super) async fn get_bot(&self, sha: &str) -> Result<Arc<BotProgram>, String> {
        self.get_with(sha, &self.bots, MAX_BOT_PROGRAM_BYTES, |bytes| {
            BotProgram::decode(bytes).map_err(|e| format!("program {sha}: {e}"))
        })
        .await
    }

    pub(super) async fn get_with<T>(
        &self,
        sha: &str,
        held: &Mutex<Held<T>>,
        cap: u64,
        make: impl FnOnce(&[u8]) -> Result<T, String>,
    ) -> Result<Arc<T>, String> {
        if !wire::valid_sha256(sha) {
            return Err(format!("{sha:?} is not a program hash"));
        }
        if let Some(e) = held.lock().expect("lock").get(sha) {
            return Ok(e);
        }
        // One fetch per program, however many games wait for it.
        let lock = self
            .loading
            .lock()
            .await
            .entry(sha.to_string())
            .or_default()
            .clone();
        let _guard = lock.lock().await;
        if let Some(e) = held.lock().expect("lock").get(sha) {
            return Ok(e);
        }
        let path = self.dir.join(sha);
        let bytes = match read_verified(&path, sha) {
            Some(b) => b,
            None => {
                let b = self.download(sha, cap).await?;
                store_file(&self.dir, &path, &b);
                b
            }
        };
        let program = Arc::new(make(&bytes)?);
        held.lock().expect("lock").keep(sha, program.clone());
        Ok(program)
    }

    pub(super) async fn download(&self, sha: &str, cap: u64) -> Result<Vec<u8>, String> {
        let late = |limit: Duration| {
            format!(
                "fetching program {sha} took more than {} s",
                limit.as_secs()
            )
        };
        let object = tokio::time::timeout(FETCH_TIME, self.bucket.get(sha))
            .await
            .map_err(|_| late(FETCH_TIME))?
            .map_err(|e| format!("fetching program {sha}: {e}"))?;
        if object.info.size as u64 > cap {
            return Err(format!(
                "program {sha} in the store has {} bytes, more than any strategy",
                object.info.size
            ));
        }
        let limit = FETCH_TIME + Duration::from_secs(object.info.size as u64 >> 20);
        let mut bytes = Vec::with_capacity(object.info.size);
        tokio::time::timeout(limit, object.take(cap + 1).read_to_end(&mut bytes))
            .await
            .map_err(|_| late(limit))?
            .map_err(|e| format!("fetching program {sha}: {e}"))?;
        if sha256_hex(&bytes) != sha {
            return Err(format!(
                "program {sha} from the object store does not have that SHA-256; it was not run"
            ));
        }
        Ok(bytes)
    }
}

/// The cached file, if its content has the hash it is named by; a file
/// that does not is removed (and the program fetched again).
pub(super) fn read_verified(path: &Path, sha: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    if sha256_hex(&bytes) == sha {
        return Some(bytes);
    }
    eprintln!(
        "worker: cached program {} does not match its SHA-256; fetching it again",
        path.display()
    );
    let _ = std::fs::remove_file(path);
    None
}

/// Writes a cache file (a temporary name, then renamed); failing to cache
/// only costs a fetch next time.
pub(super) fn store_file(dir: &Path, path: &Path, bytes: &[u8]) {
    let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) else {
        return;
    };
    use std::io::Write;
    if tmp.write_all(bytes).is_ok() {
        let _ = tmp.persist(path);
    }
}
