"""Renders the guides and the index page of the API reference (scripts/build-docs, issue 30).

    python render_guides.py ROOT OUT

Renders ROOT's README.md, GUIDE.md, ARCHITECTURE.md, CHANGELOG.md, the npm and Python packages'
READMEs and docs/*.md to
OUT/guides/ (links between them point at the rendered pages; docs/ images are copied) with
markdown2 (a dependency of pdoc, installed with it), then writes OUT/index.html linking the
guides and whichever API references exist in OUT: rust/ (rustdoc), js/ (TypeDoc) and
python/ (pdoc).
"""

import html
import json
import pathlib
import re
import shutil
import sys

import markdown2

GUIDES = ["README.md", "GUIDE.md", "ARCHITECTURE.md", "CHANGELOG.md", "bindings/npm/README.md", "crates/ccv3-py/README.md"]
EXTRAS = ["fenced-code-blocks", "tables", "header-ids", "code-friendly", "cuddled-lists", "strike"]
STYLE = """body { font: 16px/1.5 system-ui, sans-serif; max-width: 54rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
pre { background: #f5f5f5; padding: .75rem; overflow-x: auto; } code { font-size: .9em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .2rem .5rem; vertical-align: top; }
nav { margin-bottom: 1.5rem; font-size: .9em; } img { max-width: 100%; }"""


def page(title: str, body: str, home: str) -> str:
    nav = f'<nav><a href="{home}">ccv3 documentation</a></nav>' if home else ""
    return (f'<!doctype html>\n<html lang="en"><meta charset="utf-8">\n<meta name="viewport" '
            f'content="width=device-width, initial-scale=1">\n<title>{html.escape(title)}</title>\n'
            f"<style>{STYLE}</style>\n<body>\n{nav}\n{body}\n</body></html>\n")


def render_guides(root: pathlib.Path, out: pathlib.Path) -> list[tuple[str, str]]:
    """Renders each guide; returns (title, path under out) in index order."""
    sources = [root / g for g in GUIDES if (root / g).is_file()]
    sources += sorted((root / "docs").glob("*.md"))
    rendered = {src.resolve() for src in sources}
    listed = []
    for src in sources:
        rel = src.relative_to(root)
        dest = out / "guides" / rel.with_suffix(".html")
        dest.parent.mkdir(parents=True, exist_ok=True)
        text = src.read_text(encoding="utf-8")

        def link(m: re.Match) -> str:
            target, anchor = m.group(2), m.group(3) or ""
            if "://" not in target and (src.parent / target).resolve() in rendered:
                target = target[:-3] + ".html"
            return f"{m.group(1)}({target}{anchor})"

        text = re.sub(r"(\]\s?)\(([^)\s#]+\.md)(#[^)\s]*)?\)", link, text)
        body = markdown2.markdown(text, extras=EXTRAS)
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), rel.stem)
        title = title.replace("`", "")
        home = "../" * len(dest.relative_to(out).parts[:-1]) + "index.html"
        dest.write_text(page(f"{title} - ccv3", body, home), encoding="utf-8")
        listed.append((f"{title} ({rel})", str(dest.relative_to(out))))
    for image in (root / "docs").glob("*.png"):
        shutil.copy2(image, out / "guides" / "docs" / image.name)
    return listed


def write_index(root: pathlib.Path, out: pathlib.Path, guides: list[tuple[str, str]]) -> None:
    version = re.search(r'^version = "([^"]+)"', (root / "Cargo.toml").read_text(), re.M)
    parts = [f"<h1>ccv3 {html.escape(version.group(1) if version else '')} documentation</h1>",
             "<p>The reference implementation of the Character Card V3 standard and its lorebook "
             "engine: the API of the Rust crates, the npm package <code>ccv3</code> and the Python "
             "package <code>ccv3</code>, and the guides.</p>", "<h2>API reference</h2>", "<ul>"]
    crates = sorted(p.parent.name for p in (out / "rust").glob("*/index.html")) if (out / "rust").is_dir() else []
    if crates:
        links = ", ".join(f'<a href="rust/{c}/index.html"><code>{c.replace("_", "-")}</code></a>' for c in crates)
        parts.append(f'<li>Rust (rustdoc): <a href="rust/ccv3/index.html">the <code>ccv3</code> crate</a>; every crate: {links}</li>')
    else:
        parts.append("<li>Rust: not built</li>")
    if (out / "js" / "index.html").is_file():
        parts.append('<li>JavaScript / TypeScript (TypeDoc): <a href="js/index.html">the npm package <code>ccv3</code></a> '
                     "(Node: <code>ccv3</code>; browsers: <code>ccv3/web</code>)</li>")
    else:
        parts.append("<li>JavaScript: not built (run scripts/build-bindings first)</li>")
    if (out / "python" / "ccv3.html").is_file():
        parts.append('<li>Python (pdoc): <a href="python/ccv3.html">the Python package <code>ccv3</code></a></li>')
    else:
        parts.append("<li>Python: not built (run scripts/build-bindings first)</li>")
    parts += ["</ul>", "<h2>Guides</h2>", "<ul>"]
    parts += [f'<li><a href="{html.escape(href)}">{html.escape(title)}</a></li>' for title, href in guides]
    parts.append("</ul>")
    (out / "index.html").write_text(page("ccv3 documentation", "\n".join(parts), ""), encoding="utf-8")


def main() -> int:
    root, out = (pathlib.Path(a).resolve() for a in sys.argv[1:3])
    guides = render_guides(root, out)
    write_index(root, out, guides)
    print(json.dumps({"guides": len(guides)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
