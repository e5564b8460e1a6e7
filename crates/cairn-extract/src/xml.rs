//! XML as the readers parse it: by roxmltree, with DTDs refused.

/// Parses XML with roxmltree, a DTD refused (so no entity can expand); an error names
/// `what` was being read.
pub fn parse_xml<'a>(xml: &'a str, what: &str) -> Result<roxmltree::Document<'a>, String> {
    roxmltree::Document::parse_with_options(
        xml,
        roxmltree::ParsingOptions {
            allow_dtd: false,
            ..roxmltree::ParsingOptions::default()
        },
    )
    .map_err(|e| format!("its {what} cannot be read: {e}"))
}
