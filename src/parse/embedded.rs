//! Code embedded in another format: the `<script>` elements of Vue and Svelte single-file
//! components. Everything outside their contents is blanked to spaces (newlines kept), so
//! the grammar reads only the script while every byte, line and column stays where it is in
//! the original file. Pure text work: no parsing, no I/O.

/// `text` with everything but the contents of `<script …>…</script>` elements replaced by
/// spaces (line breaks kept). Tag names are matched case-insensitively; an unclosed script
/// runs to the end of the file.
pub fn blank_outside_scripts(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let lower = text.to_ascii_lowercase();
    let mut keep = vec![false; bytes.len()];
    let mut from = 0;
    while let Some(open) = lower[from..].find("<script").map(|i| from + i) {
        let Some(content_start) = lower[open..].find('>').map(|i| open + i + 1) else {
            break;
        };
        let content_end = lower[content_start..]
            .find("</script")
            .map_or(bytes.len(), |i| content_start + i);
        keep[content_start..content_end].fill(true);
        from = content_end;
    }
    bytes
        .iter()
        .zip(keep)
        .map(|(&byte, kept)| match (kept, byte) {
            (true, _) | (false, b'\n' | b'\r') => byte,
            (false, _) => b' ',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_script_contents_survive_at_their_own_offsets() {
        let sfc = "<template>\n  <p>{{ total }}</p>\n</template>\n<script setup lang=\"ts\">\nconst total = 1\n</script>\n<style>p { color: red }</style>\n";
        let view = String::from_utf8(blank_outside_scripts(sfc)).unwrap();
        assert_eq!(view.len(), sfc.len());
        assert_eq!(view.lines().count(), sfc.lines().count());
        assert_eq!(view.lines().nth(4), Some("const total = 1"));
        assert!(!view.contains("template") && !view.contains("color"));
    }

    #[test]
    fn an_unclosed_script_runs_to_the_end() {
        let view = blank_outside_scripts("<SCRIPT>\nlet a = 1");
        assert_eq!(String::from_utf8(view).unwrap(), "        \nlet a = 1");
    }
}
