//! Documents made for tests and benchmarks, by the same kept crates a user's files come
//! from: PDFs written with lopdf (a Type1 font, one text line per `Tj`), DOCX, ODT and EPUB
//! as zip archives of their XML.

use std::io::Write;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// A PDF with one page per entry, each line of an entry a line of text on the page. An
/// empty entry makes a page with no text at all.
pub fn pdf(pages: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    pdf_document(pages).save_to(&mut out).unwrap_or_default();
    out
}

/// The document [`pdf`] saves, to change before saving (encrypt it, say).
pub fn pdf_document(pages: &[&str]) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for text in pages {
        let mut operations = Vec::new();
        if !text.is_empty() {
            operations.push(Operation::new("BT", vec![]));
            operations.push(Operation::new("Tf", vec!["F1".into(), 11.into()]));
            operations.push(Operation::new("TL", vec![14.into()]));
            operations.push(Operation::new("Td", vec![50.into(), 780.into()]));
            for line in text.lines() {
                operations.push(Operation::new("Tj", vec![Object::string_literal(line)]));
                operations.push(Operation::new("T*", vec![]));
            }
            operations.push(Operation::new("ET", vec![]));
        }
        let content = Content { operations };
        let content_id = doc.add_object(Stream::new(
            dictionary! {},
            content.encode().unwrap_or_default(),
        ));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(page_id.into());
    }
    let count = i64::try_from(kids.len()).unwrap_or(0);
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    doc
}

/// A zip archive of `(name, content)` members, deflated.
pub fn zip(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, content) in members {
        if writer.start_file(*name, options).is_ok() {
            let _ = writer.write_all(content);
        }
    }
    writer
        .finish()
        .map(std::io::Cursor::into_inner)
        .unwrap_or_default()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A DOCX file of paragraphs: `(Some(level), text)` a heading, `(None, text)` body text.
pub fn docx(paragraphs: &[(Option<u8>, &str)]) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|(level, text)| {
            let style = level
                .map(|l| format!("<w:pPr><w:pStyle w:val=\"Heading{l}\"/></w:pPr>"))
                .unwrap_or_default();
            format!("<w:p>{style}<w:r><w:t>{}</w:t></w:r></w:p>", escape(text))
        })
        .collect();
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
         <w:body>{body}</w:body></w:document>"
    );
    zip(&[
        ("[Content_Types].xml", b"<Types/>".as_slice()),
        ("word/document.xml", document.as_bytes()),
    ])
}

/// An ODT file of paragraphs, as [`docx`].
pub fn odt(paragraphs: &[(Option<u8>, &str)]) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|(level, text)| match level {
            Some(l) => format!(
                "<text:h text:outline-level=\"{l}\">{}</text:h>",
                escape(text)
            ),
            None => format!("<text:p>{}</text:p>", escape(text)),
        })
        .collect();
    let content = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <office:document-content \
         xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
         xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\">\
         <office:body><office:text>{body}</office:text></office:body>\
         </office:document-content>"
    );
    zip(&[
        (
            "mimetype",
            b"application/vnd.oasis.opendocument.text".as_slice(),
        ),
        ("content.xml", content.as_bytes()),
    ])
}

/// An EPUB book of `(title, body paragraphs)` chapters, in this order in its spine (the
/// manifest lists them backwards, as a spine may differ from it).
pub fn epub(chapters: &[(&str, &str)]) -> Vec<u8> {
    let container = "<?xml version=\"1.0\"?>\
        <container version=\"1.0\" xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\">\
        <rootfiles><rootfile full-path=\"OEBPS/content.opf\" \
        media-type=\"application/oebps-package+xml\"/></rootfiles></container>";
    let items: String = (0..chapters.len())
        .rev()
        .map(|i| {
            format!("<item id=\"c{i}\" href=\"text/ch{i}.xhtml\" media-type=\"application/xhtml+xml\"/>")
        })
        .collect();
    let spine: String = (0..chapters.len())
        .map(|i| format!("<itemref idref=\"c{i}\"/>"))
        .collect();
    let opf = format!(
        "<?xml version=\"1.0\"?><package xmlns=\"http://www.idpf.org/2007/opf\" version=\"3.0\">\
         <manifest>{items}</manifest><spine>{spine}</spine></package>"
    );
    let pages: Vec<(String, String)> = chapters
        .iter()
        .enumerate()
        .map(|(i, (title, body))| {
            let paragraphs: String = body
                .lines()
                .map(|p| format!("<p>{}</p>", escape(p)))
                .collect();
            (
                format!("OEBPS/text/ch{i}.xhtml"),
                format!(
                    "<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\">\
                     <head><title>{t}</title></head><body><h1>{t}</h1>{paragraphs}</body></html>",
                    t = escape(title)
                ),
            )
        })
        .collect();
    let mut members: Vec<(&str, &[u8])> = vec![
        ("mimetype", b"application/epub+zip".as_slice()),
        ("META-INF/container.xml", container.as_bytes()),
        ("OEBPS/content.opf", opf.as_bytes()),
    ];
    for (name, page) in &pages {
        members.push((name.as_str(), page.as_bytes()));
    }
    zip(&members)
}
