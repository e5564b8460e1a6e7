//! The model file: a cheap check that a path holds a GGUF model before llama.cpp is asked
//! to load it (where the default one lives is `cairn_models`').

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

use crate::error::LlmError;

/// What a user can do about a missing or bad model file.
const REMEDY: &str = "run `cairn models --fetch` (or scripts/fetch-model.sh in Cairn's sources) \
                      to fetch the default model, or set CAIRN_MODEL_PATH to a GGUF model file";

/// Every GGUF file starts with these four bytes.
const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// Checks that `path` is a readable file starting with the GGUF magic. Reads four bytes.
pub(crate) fn probe(path: &Path) -> Result<(), LlmError> {
    let shown = path.display();
    let mut file = File::open(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => LlmError::Fatal(format!("no local model at {shown}: {REMEDY}")),
        _ => LlmError::Fatal(format!(
            "cannot open the local model {shown} ({e}): {REMEDY}"
        )),
    })?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(LlmError::Fatal(format!(
            "the local model path {shown} is a directory, not a GGUF file: {REMEDY}"
        )));
    }
    let mut magic = [0u8; 4];
    let not_gguf = || {
        LlmError::Fatal(format!(
            "{shown} is not a GGUF model file (it does not start with the GGUF magic): {REMEDY}"
        ))
    };
    file.read_exact(&mut magic).map_err(|_| not_gguf())?;
    if &magic != GGUF_MAGIC {
        return Err(not_gguf());
    }
    Ok(())
}

/// The error for a file llama.cpp refused to load although it looks like GGUF.
pub(crate) fn load_failed(path: &Path, why: impl std::fmt::Display) -> LlmError {
    LlmError::Fatal(format!(
        "llama.cpp could not load the model {} ({why}); the file may be damaged or of an \
         architecture this build does not know: {REMEDY}",
        path.display()
    ))
}

/// The name a model is shown under: its file name without the `.gguf` extension.
pub(crate) fn model_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_tells_missing_from_not_gguf() {
        let dir = tempfile::tempdir().unwrap();
        let missing = probe(&dir.path().join("nope.gguf")).unwrap_err();
        assert!(
            missing.to_string().contains("no local model at"),
            "{missing}"
        );
        assert!(
            missing.to_string().contains("CAIRN_MODEL_PATH"),
            "{missing}"
        );

        let text = dir.path().join("notes.gguf");
        std::fs::write(&text, "hello, not a model").unwrap();
        let bad = probe(&text).unwrap_err();
        assert!(bad.to_string().contains("not a GGUF model file"), "{bad}");

        let short = dir.path().join("short.gguf");
        std::fs::write(&short, "GG").unwrap();
        assert!(probe(&short).is_err());
        assert!(probe(dir.path()).is_err());

        let good = dir.path().join("tiny.gguf");
        std::fs::write(&good, b"GGUF\x03\x00\x00\x00").unwrap();
        assert_eq!(probe(&good), Ok(()));
    }

    #[test]
    fn model_name_is_the_file_stem() {
        let path = Path::new("/m/SmolLM2-135M-Instruct.Q4_1.gguf");
        assert_eq!(model_name(path), "SmolLM2-135M-Instruct.Q4_1");
    }
}
