//! The desktop's UI font, named to the page. On Linux the page's `system-ui` costs
//! WebKitGTK a walk through fontconfig's whole fallback list for each weight and size
//! (where it does not know the family, as without GNOME's settings daemon), and so does any
//! family the system lacks; a family the system has is matched at once. GTK's own setting
//! (`gtk-font-name`, "Cantarell 11" on GNOME) is the font the desktop draws its UI with, so
//! it is installed: the page asks for it first, then `sans-serif`.

/// The script the window runs before the page's own: `window.__CAIRN_UI_FONT__`, the UI
/// font's family when there is a usable one.
pub fn page_script() -> Option<String> {
    let family = ui_font_family()?;
    // JSON is a JavaScript literal; the family's characters were checked besides.
    let literal = serde_json::to_string(&family).ok()?;
    Some(format!("window.__CAIRN_UI_FONT__ = {literal};"))
}

#[cfg(target_os = "linux")]
fn ui_font_family() -> Option<String> {
    use gtk::prelude::GtkSettingsExt;
    let name = gtk::Settings::default()?.gtk_font_name()?;
    family_of(&name)
}

#[cfg(not(target_os = "linux"))]
fn ui_font_family() -> Option<String> {
    None
}

/// The family of a GTK font name ("Cantarell 11", "Noto Sans Bold 10"), when usable.
#[cfg(target_os = "linux")]
fn family_of(font_name: &str) -> Option<String> {
    let family = gtk::pango::FontDescription::from_string(font_name).family()?;
    usable(family.trim())
}

/// `family`, when the page can use it: not one of fontconfig's generic aliases (the
/// page's `sans-serif` says the same for less), and only letters, digits, spaces, `-`, `_`
/// and `.` (it goes into a style sheet; anything else is left to `sans-serif`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn usable(family: &str) -> Option<String> {
    let generic = [
        "sans",
        "sans serif",
        "sans-serif",
        "serif",
        "monospace",
        "system-ui",
    ];
    let safe = family
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'));
    (!family.is_empty()
        && family.len() <= 64
        && safe
        && !generic.contains(&family.to_ascii_lowercase().as_str()))
    .then(|| family.to_string())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::family_of;

    #[test]
    fn the_family_of_a_gtk_font_name_without_its_size_and_style() {
        assert_eq!(family_of("Cantarell 11").as_deref(), Some("Cantarell"));
        assert_eq!(family_of("Noto Sans Bold 10").as_deref(), Some("Noto Sans"));
        assert_eq!(family_of("Ubuntu, 11").as_deref(), Some("Ubuntu"));
    }

    #[test]
    fn generic_aliases_and_unsafe_names_are_left_to_sans_serif() {
        for name in ["Sans 10", "Sans Serif 11", "Monospace 10", "", "11"] {
            assert_eq!(family_of(name), None, "{name:?}");
        }
        for hostile in [
            "Evil\"; } body { display: none } x { \" 10",
            "A</script><script>alert(1)</script> 10",
            "Fam'ily 10",
            "Long Name Long Name Long Name Long Name Long Name Long Name Long Name 10",
        ] {
            assert_eq!(family_of(hostile), None, "{hostile:?}");
        }
    }
}
