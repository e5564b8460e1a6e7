//! EPUB books: the container names the package, the package's spine gives the chapters in
//! reading order, and each chapter (XHTML) is read whole as markdown, its own headings
//! kept (a chapter without one is headed by its title in the table of contents, or its
//! name).

use std::collections::HashMap;

use crate::xml::parse_xml;
use crate::zipped::Zipped;

const CONTAINER: &str = "urn:oasis:names:tc:opendocument:xmlns:container";
const OPF: &str = "http://www.idpf.org/2007/opf";

/// The most chapters read of one book.
const MAX_CHAPTERS: usize = 2_000;

/// An EPUB file's text, chapter after chapter.
pub fn extract(bytes: &[u8]) -> Result<String, String> {
    let mut zip = Zipped::open(bytes, "EPUB file")?;
    let container = zip
        .text("META-INF/container.xml")?
        .ok_or("not an EPUB file (it has no META-INF/container.xml)")?;
    let container = parse_xml(&container, "container")?;
    let package_path = container
        .descendants()
        .find(|n| n.has_tag_name((CONTAINER, "rootfile")))
        .and_then(|n| n.attribute("full-path"))
        .ok_or("the EPUB names no package")?
        .to_string();
    let package = zip
        .text(&package_path)?
        .ok_or_else(|| format!("the EPUB's package `{package_path}` is missing"))?;
    let package = parse_xml(&package, "package")?;
    let base = package_path
        .rsplit_once('/')
        .map_or(String::new(), |(dir, _)| format!("{dir}/"));
    let manifest: HashMap<&str, &str> = package
        .descendants()
        .filter(|n| n.has_tag_name((OPF, "item")))
        .filter_map(|n| Some((n.attribute("id")?, n.attribute("href")?)))
        .collect();
    let spine: Vec<&str> = package
        .descendants()
        .filter(|n| n.has_tag_name((OPF, "itemref")))
        .filter_map(|n| n.attribute("idref"))
        .take(MAX_CHAPTERS)
        .collect();
    if spine.is_empty() {
        return Err("the EPUB's spine lists no chapters".into());
    }
    let mut out = Vec::new();
    for id in spine {
        let Some(href) = manifest.get(id) else {
            continue;
        };
        let path = join(&base, href);
        let Some(chapter) = zip.text(&path)? else {
            continue;
        };
        let text = crate::html::whole(&chapter);
        if text.trim().is_empty() {
            continue;
        }
        if !text.trim_start().starts_with('#') {
            let name = href.rsplit('/').next().unwrap_or(href);
            let name = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            out.push(format!("# {name}\n"));
        }
        out.push(text);
    }
    Ok(out.join("\n\n"))
}

/// `href` (relative, maybe percent-encoded, maybe with `..`) under `base`.
fn join(base: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or(href).replace("%20", " ");
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in href.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}
