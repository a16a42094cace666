//! The bytes a grammar reads for a file: the file itself, or a view of it of the same length
//! with parts blanked to spaces (line breaks kept), so every byte, line and column of what
//! the grammar finds is where it is in the file. Dispatch and the one blanking rule; the
//! views live in `embedded` (script blocks) and `macros` (C/C++ declaration macros).

use super::languages::CodeView;

/// The view of `text` the grammar should read.
pub fn code_view(text: &str, view: CodeView) -> Vec<u8> {
    match view {
        CodeView::ScriptBlocks => super::embedded::blank_outside_scripts(text),
        CodeView::DeclarationMacros => super::macros::blank_declaration_macros(text),
    }
}

/// Blanks `bytes` to spaces, keeping line breaks, so rows and columns do not move.
pub fn blank(bytes: &mut [u8]) {
    for byte in bytes {
        if *byte != b'\n' && *byte != b'\r' {
            *byte = b' ';
        }
    }
}
