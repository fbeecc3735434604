"""Obsidian Markdown into a parsed note (`parser`): frontmatter, body tokens, links, headings and tags."""
