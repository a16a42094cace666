; Markdown: every heading opens a section; sections nest by heading level.
(section (atx_heading heading_content: (_) @name)) @def.section
(section (setext_heading heading_content: (_) @name)) @def.section
