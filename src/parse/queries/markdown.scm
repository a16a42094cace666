; Markdown: every heading opens a section; sections nest by heading level. Setext headings
; after a section's first heading are added in extract.rs (the grammar does not wrap them).
(section . (atx_heading heading_content: (_) @name)) @def.section
(section . (setext_heading heading_content: (_) @name)) @def.section
