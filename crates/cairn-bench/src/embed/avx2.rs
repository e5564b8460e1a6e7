//! The ONNX Runtime engines again, as on a CPU with AVX2 alone (no AVX-512, no VNNI: AMD Zen
//! 2 and 3, Intel before Ice Lake), on a CPU that has them. ONNX Runtime picks its kernels
//! from CPUID when it starts, so this bench runs itself a second time under gdb with
//! `cpuid_mask.py`, which masks AVX-512 and VNNI out of every CPUID answer the library gets,
//! and reads that run's JSON. The kernels are the ones such a CPU runs; the cores are still
//! this CPU's, which may be faster clock for clock than the laptop's.
//!
//! The second run has a models folder of its own (links to the installed model and
//! runtime, an empty cache), so the verdicts it keeps for the masked kernels never reach
//! the user's.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{engine_rows, missing_rows, Args, Measured, Outcome, GOAL_AVX2_CHUNKS_PER_S};
use crate::report::{Row, Section};

/// The engines that run on ONNX Runtime, the ones whose kernels follow CPUID.
const ORT_ENGINES: [&str; 3] = ["onnxruntime f32", "onnxruntime int8", "app"];

/// Long enough for the default run (about 20 s here) on a slow CPU.
const DEADLINE: Duration = Duration::from_secs(600);

const SCRIPT: &str = include_str!("cpuid_mask.py");

pub const NOTE: &str = "on AVX2 alone: the ONNX Runtime engines again in a second process under gdb, which masks AVX-512 and VNNI out of every CPUID answer ONNX Runtime gets, so it runs the kernels it runs on a CPU without them (AMD Zen 2 and 3, Intel before Ice Lake); on this CPU's cores, which such a laptop may not match clock for clock; goal for chunks/s there: 50";

/// The second run's outcome.
pub enum Alone {
    /// Not asked for, no ONNX Runtime engine chosen, or this CPU has nothing to mask.
    Skipped,
    /// It could not run: why.
    Missing(String),
    Ran {
        results: Vec<Outcome>,
        /// CPUID answers masked, by library.
        masked: Value,
    },
}

impl Alone {
    pub fn section(&self, batch: usize) -> Option<Section> {
        let rows = match self {
            Alone::Skipped => return None,
            Alone::Missing(why) => vec![Row::info(
                "onnxruntime on AVX2 alone: not measured",
                format!("missing: {why}"),
            )],
            Alone::Ran { results, .. } => {
                let suffix = " on AVX2 alone";
                let mut rows = missing_rows(results, suffix);
                for f in results.iter().filter_map(|r| r.as_ref().ok()) {
                    rows.extend(engine_rows(f, batch, None, GOAL_AVX2_CHUNKS_PER_S, suffix));
                }
                rows
            }
        };
        Some(Section {
            title: "The same as on a CPU with AVX2 alone (no AVX-512, no VNNI)".into(),
            rows,
        })
    }

    pub fn json(&self) -> Value {
        match self {
            Alone::Skipped => Value::Null,
            Alone::Missing(why) => json!({"missing": why}),
            Alone::Ran { results, masked } => json!({
                "engines": results.iter().filter_map(|r| r.as_ref().ok()).collect::<Vec<_>>(),
                "missing": super::missing_json(results),
                "masked_cpuid_answers": masked,
            }),
        }
    }
}

/// Runs the chosen ONNX Runtime engines as on a CPU with AVX2 alone, when that differs from
/// this CPU.
pub fn measure(args: &Args, chosen: &[&str]) -> Alone {
    let engines: Vec<&str> = chosen
        .iter()
        .copied()
        .filter(|e| ORT_ENGINES.contains(e))
        .collect();
    let cpu = cairn_embed::cpu::Cpu::this();
    if args.this_cpu_only || engines.is_empty() || !cpu.avx2 || !(cpu.avx512 || cpu.vnni) {
        return Alone::Skipped;
    }
    eprintln!("cairn-bench embed: {} on AVX2 alone", engines.join(", "));
    rerun(args, &engines).unwrap_or_else(|error| Alone::Missing(format!("{error:#}")))
}

fn rerun(args: &Args, engines: &[&str]) -> anyhow::Result<Alone> {
    let gdb = on_path("gdb").ok_or_else(|| anyhow::anyhow!("gdb is not installed"))?;
    on_path("objdump").ok_or_else(|| anyhow::anyhow!("objdump is not installed"))?;
    let models = cairn_models::models_dir().ok_or_else(|| anyhow::anyhow!("no models folder"))?;
    let dir = tempfile::tempdir()?;
    let data = own_models_folder(&models, dir.path())?;
    let script = dir.path().join("cpuid_mask.py");
    std::fs::write(&script, SCRIPT)?;
    let report = dir.path().join("masked.json");
    let mut child = Command::new(gdb)
        .args(["-q", "-batch", "-nx", "-x"])
        .arg(&script)
        .arg("--args")
        .arg(std::env::current_exe()?)
        .args(["--json", "embed", "--this-cpu-only", "--engines"])
        .arg(engines.join(","))
        .args(["--chunks", &args.chunks.to_string()])
        .args(["--batch", &args.batch.to_string()])
        .args(["--queries", &args.queries.to_string()])
        .args(["--threads", &args.threads.to_string()])
        .env("XDG_DATA_HOME", &data)
        .env("CAIRN_CPUID_MASK_REPORT", &report)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("no pipe from the run under gdb"))?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("the run under gdb took over {} s", DEADLINE.as_secs());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = reader.join().unwrap_or_default();
    let masked: Value = std::fs::read(&report)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null);
    if !status.success() {
        anyhow::bail!("the run under gdb failed ({status})");
    }
    read_run(&text, masked["masked"].clone())
}

/// The second run's figures, from its stdout (its JSON, perhaps among gdb's lines), and the
/// proof that ONNX Runtime's answers were masked.
fn read_run(stdout: &str, masked: Value) -> anyhow::Result<Alone> {
    let start = stdout
        .lines()
        .position(|line| line == "{")
        .ok_or_else(|| anyhow::anyhow!("the run under gdb printed no figures"))?;
    let rest: String = stdout.lines().skip(start).collect::<Vec<_>>().join("\n");
    let run: Value = serde_json::Deserializer::from_str(&rest)
        .into_iter::<Value>()
        .next()
        .ok_or_else(|| anyhow::anyhow!("the run under gdb printed no figures"))??;
    let measured: Vec<Measured> = serde_json::from_value(run["engines"].clone())?;
    let answers: u64 = masked
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    if !measured.is_empty() && answers == 0 {
        anyhow::bail!("ONNX Runtime asked for no CPU features under gdb: nothing was masked");
    }
    let mut results: Vec<Outcome> = measured.into_iter().map(Ok).collect();
    for missing in run["missing"].as_array().into_iter().flatten() {
        results.push(Err((
            missing["engine"].as_str().unwrap_or("?").to_string(),
            missing["why"].as_str().unwrap_or("?").to_string(),
        )));
    }
    Ok(Alone::Ran { results, masked })
}

/// `<dir>/cairn/models` with links to every installed model and library but an empty
/// cache, for `XDG_DATA_HOME`.
fn own_models_folder(models: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    let own = dir.join("data").join("cairn").join("models");
    std::fs::create_dir_all(&own)?;
    for entry in std::fs::read_dir(models)? {
        let entry = entry?;
        if entry.file_name() != "cache" {
            std::os::unix::fs::symlink(entry.path(), own.join(entry.file_name()))?;
        }
    }
    Ok(dir.join("data"))
}

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(engine: &str) -> Value {
        json!({
            "engine": engine, "chunks_per_s": 55.6, "query_p50_ms": 1.69, "query_p99_ms": 2.02,
            "query_under_load_p50_ms": 2.74, "query_under_load_p99_ms": 280.0,
            "min_cosine": 0.99296, "load_ms": 5178.0, "extra_mib": 108.0,
        })
    }

    /// The second run's JSON is found among gdb's own lines, and its rows carry the AVX2
    /// goal and say where they ran.
    #[test]
    fn the_masked_run_is_read_among_gdbs_lines() {
        let run = json!({"engines": [figures("onnxruntime int8")], "missing": [
            {"engine": "app", "why": "the bundled model is not installed"}
        ]});
        let stdout = format!(
            "Using host libthread_db library\n{}\n[Inferior 1 exited normally]\n",
            serde_json::to_string_pretty(&run).unwrap()
        );
        let alone = read_run(&stdout, json!({"libonnxruntime.so.1.31.1": 33})).unwrap();
        let section = alone.section(16).expect("a section");
        let names: Vec<&str> = section.rows.iter().map(|r| r.name.as_str()).collect();
        assert!(
            names.contains(&"app on AVX2 alone: not measured")
                && names.contains(
                    &"onnxruntime int8 on AVX2 alone: chunks/s (256 tokens, batches of 16)"
                ),
            "{names:?}"
        );
        let chunks = &section.rows[1];
        assert_eq!(chunks.goal, ">= 50");
        assert_eq!(alone.json()["engines"][0]["chunks_per_s"], 55.6);
        assert_eq!(
            alone.json()["masked_cpuid_answers"]["libonnxruntime.so.1.31.1"],
            33
        );
    }

    /// Figures from a run where ONNX Runtime's answers were not masked are not figures for
    /// a CPU with AVX2 alone.
    #[test]
    fn figures_without_a_masked_answer_are_refused() {
        let run = json!({"engines": [figures("onnxruntime int8")], "missing": []});
        let stdout = serde_json::to_string_pretty(&run).unwrap();
        for masked in [
            json!({}),
            json!({"libonnxruntime.so.1.31.1": 0}),
            Value::Null,
        ] {
            let error = read_run(&stdout, masked).err().expect("refused");
            assert!(error.to_string().contains("nothing was masked"), "{error}");
        }
        assert!(read_run("gdb: no such file\n", json!({})).is_err());
    }
}
