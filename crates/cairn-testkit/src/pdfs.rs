//! PDFs as real ones come, made for tests: encrypted (with an empty or a real user
//! password), scanned (pages that are only a picture, no text layer), and damaged (the
//! cross-reference table's offsets wrong, the trailer cut off).

use lopdf::encryption::{EncryptionState, EncryptionVersion, Permissions};
use lopdf::{dictionary, Document, Object, Stream};

/// [`crate::documents::pdf`] encrypted (RC4, 128-bit) with `user_password` (empty: anyone
/// may open it, as with most encrypted PDFs) and another owner password.
pub fn encrypted(pages: &[&str], user_password: &str) -> Vec<u8> {
    let mut doc = crate::documents::pdf_document(pages);
    let id = Object::string_literal(b"0123456789abcdef".to_vec());
    doc.trailer.set("ID", vec![id.clone(), id]);
    let version = EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner secret",
        user_password,
        key_length: 128,
        permissions: Permissions::default(),
    };
    let state = EncryptionState::try_from(version).unwrap_or_default();
    let _ = doc.encrypt(&state);
    save(doc)
}

/// A page that is only a picture: a JPEG of `width` × `height` grey pixels scanned at
/// `dpi`.
#[derive(Debug, Clone)]
pub struct Scan {
    pub width: u32,
    pub height: u32,
    pub dpi: u32,
    pub jpeg: Vec<u8>,
}

/// A PDF of scanned pages: each page one picture filling it, and no text.
pub fn scanned(pages: &[Scan]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut kids = Vec::new();
    for scan in pages {
        let points = |pixels: u32| f64::from(pixels) * 72.0 / f64::from(scan.dpi.max(1));
        let (w, h) = (points(scan.width), points(scan.height));
        let picture = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject",
                "Subtype" => "Image",
                "Width" => i64::from(scan.width),
                "Height" => i64::from(scan.height),
                "ColorSpace" => "DeviceGray",
                "BitsPerComponent" => 8,
                "Filter" => "DCTDecode",
            },
            scan.jpeg.clone(),
        ));
        let content = format!("q {w:.2} 0 0 {h:.2} 0 0 cm /Im1 Do Q");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
            "MediaBox" => vec![0.into(), 0.into(), Object::Real(w as f32), Object::Real(h as f32)],
            "Resources" => dictionary! { "XObject" => dictionary! { "Im1" => picture } },
        });
        kids.push(page_id.into());
    }
    let count = i64::try_from(kids.len()).unwrap_or(0);
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    save(doc)
}

/// [`crate::documents::pdf`] with a classic cross-reference table and trailer (as most
/// PDFs in the wild have) rather than a cross-reference stream.
pub fn classic(pages: &[&str]) -> Vec<u8> {
    let mut doc = crate::documents::pdf_document(pages);
    doc.reference_table.cross_reference_type = lopdf::xref::XrefType::CrossReferenceTable;
    save(doc)
}

/// `pdf` (with a [`classic`] table) with every offset of its cross-reference table moved
/// 7 bytes off, as an editor that changed the file without rewriting the table leaves it.
pub fn shifted_xref(pdf: &[u8]) -> Vec<u8> {
    let Some(start) = xref_start(pdf) else {
        return pdf.to_vec();
    };
    // The table is ASCII: lines of `0000000015 00000 n `.
    let table = String::from_utf8_lossy(&pdf[start..]);
    let shifted: Vec<String> = table
        .split('\n')
        .map(
            |line| match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                [offset, generation, "n"] if offset.len() == 10 => {
                    let moved = offset.parse::<u64>().unwrap_or(0) + 7;
                    format!("{moved:010} {generation} n ")
                }
                _ => line.to_string(),
            },
        )
        .collect();
    [&pdf[..start], shifted.join("\n").as_bytes()].concat()
}

/// `pdf` (with a [`classic`] table) without its cross-reference table, `startxref`
/// pointing at nothing: only the trailer dictionary is left, after the last object.
pub fn without_xref(pdf: &[u8]) -> Vec<u8> {
    let Some(start) = xref_start(pdf) else {
        return pdf.to_vec();
    };
    let Some(trailer) = pdf[start..].windows(7).position(|w| w == b"trailer") else {
        return pdf.to_vec();
    };
    let rest = String::from_utf8_lossy(&pdf[start + trailer..]);
    let dictionary = rest.split("startxref").next().unwrap_or_default();
    let tail = format!("{dictionary}startxref\n999999\n%%EOF");
    [&pdf[..start], tail.as_bytes()].concat()
}

/// `pdf` cut off at `share` of its length, as an interrupted download leaves it.
pub fn truncated(pdf: &[u8], share: f64) -> Vec<u8> {
    let keep = (pdf.len() as f64 * share.clamp(0.0, 1.0)) as usize;
    pdf[..keep.min(pdf.len())].to_vec()
}

/// Where the last cross-reference table begins (its `xref` line).
fn xref_start(pdf: &[u8]) -> Option<usize> {
    pdf.windows(6)
        .rposition(|w| w == b"\nxref\n")
        .map(|at| at + 1)
}

fn save(mut doc: Document) -> Vec<u8> {
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap_or_default();
    out
}

/// PDFium's library where `scripts/fetch-model.sh` installs it (`make test` runs it
/// first). Panics, saying so, when it is not there.
pub fn pdfium_library() -> std::path::PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".local/share")))
        .unwrap_or_default();
    let path = data.join("cairn/models/pdfium/libpdfium.so");
    assert!(
        path.is_file(),
        "PDFium's library is not at {}: run scripts/fetch-model.sh",
        path.display()
    );
    path
}
