//! `knobeln init [FILE] [--force]`: writes a commented `knobeln.toml` to
//! start from (the same text as `deploy/knobeln.toml`; its folder is
//! created if needed), mode 0600 (the organizer adds passwords to it), and
//! creates the contest database it names (relative to the file's folder),
//! so that `status` and the other commands that need a contest find one.
//! An existing database is opened (and migrated), never replaced.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;

use knobeln::config::Config;
use knobeln::store::Store;

#[derive(Args, Debug)]
pub struct Init {
    /// Where to write the config.
    #[arg(default_value = "knobeln.toml")]
    pub file: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

impl Init {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        if self.file.exists() && !self.force {
            bail!(
                "{} exists; use --force to overwrite it",
                self.file.display()
            );
        }
        if let Some(folder) = self.file.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("creating {}", folder.display()))?;
        }
        write_private(&self.file, knobeln::config::EXAMPLE.as_bytes())
            .with_context(|| format!("writing {}", self.file.display()))?;
        let config = Config::load_file(&self.file)?;
        let existed = config.database.exists();
        Store::open(&config.database)
            .with_context(|| format!("creating {}", config.database.display()))?;
        outln!(
            "wrote {}; contest database {} ({})",
            self.file.display(),
            config.database.display(),
            if existed { "existing, kept" } else { "new" }
        );
        outln!(
            "edit the config, then run `knobeln serve --config {}`",
            self.file.display()
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// Writes `bytes` to `path`, readable and writable by the owner only (an
/// existing file is narrowed too).
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(bytes)?;
    f.sync_all()
}
