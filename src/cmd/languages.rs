//! `knobeln languages [--config FILE] [--json]`: the bot languages of the
//! config (built-ins and `[[language]]` entries) with the toolchain
//! versions found on this machine; a missing toolchain is reported, and the
//! command still succeeds. Without any config file (none at the places
//! `--config` documents), the built-in languages. Also says how the bot
//! sandbox limits memory, processes and CPU time here (control groups or
//! rlimits). With `--fill-runtime-image` (as root) it also mounts the
//! runtime image and copies into it what every language found runs, so
//! that a server running as its own user serves bots from it (e.g. an
//! `ExecStartPre=+` line of the unit).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::anyhow;
use clap::Args;

use anyhow::Context;
use knobeln::config::{Config, ConfigError};
use knobeln::lang::{LanguageTable, Toolchains};
use knobeln::sandbox::cgroup::Cgroups;
use knobeln::sandbox::image::{runtime_image, ImageAccess};

#[derive(Args, Debug)]
pub struct Languages {
    /// The config file (else $KNOBELN_CONFIG, ./knobeln.toml,
    /// /etc/knobeln/knobeln.toml; relative paths in it are relative to it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// One JSON object per language.
    #[arg(long)]
    pub json: bool,
    /// As root: mount the runtime image and fill it with what the bots of
    /// every language found run.
    #[arg(long)]
    pub fill_runtime_image: bool,
}

impl Languages {
    pub fn apply(self) -> anyhow::Result<ExitCode> {
        let table = match Config::load(self.config.as_deref()) {
            Ok(cfg) => cfg.languages().map_err(|e| anyhow!(e))?,
            // This command describes the machine: without any config file
            // it shows the built-in languages (and says so).
            Err(ConfigError::NotFound { .. }) => {
                eprintln!("knobeln languages: no config file found; the built-in languages");
                LanguageTable::builtin()
            }
            Err(e) => return Err(e.into()),
        };
        let found = Toolchains::resolve(&table);
        for (lang, tc) in &found.entries {
            let exts: Vec<String> = lang.extensions.iter().map(|e| format!(".{e}")).collect();
            if self.json {
                let v = serde_json::json!({
                    "name": lang.name,
                    "title": lang.title,
                    "extensions": lang.extensions,
                    "compiled": !lang.compile.is_empty(),
                    "version": tc.as_ref().ok().map(|t| t.version.clone()),
                    "missing": tc.as_ref().err(),
                });
                outln!("{v}");
            } else {
                let state = match tc {
                    Ok(t) => t.version.clone(),
                    Err(why) => format!("MISSING: {why}"),
                };
                outln!(
                    "{:<8} {:<22} {:<22} {state}",
                    lang.name,
                    lang.title,
                    exts.join(" ")
                );
            }
        }
        if !self.json {
            outln!("sandbox: {}", Cgroups::detect().describe());
        }
        if self.fill_runtime_image {
            let image = runtime_image().map_err(|why| anyhow!("no runtime image: {why}"))?;
            if image.access() != ImageAccess::Fills {
                return Err(anyhow!(
                    "the runtime image can be filled only as root ({})",
                    image.root().display()
                ));
            }
            for tc in found.entries.iter().filter_map(|(_, t)| t.as_ref().ok()) {
                let mut paths = tc.run_files.clone();
                paths.extend(tc.run_read_only.iter().cloned());
                paths.extend(tc.run_program.clone());
                image.ensure(&paths, &[]).with_context(|| {
                    format!("filling the runtime image for {}", tc.language.name)
                })?;
            }
            outln!("runtime image: {} filled", image.root().display());
        }
        Ok(ExitCode::SUCCESS)
    }
}
