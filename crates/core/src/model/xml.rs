//! A small XML tree with line numbers and source spans, for the parts of URDF that urdf-rs
//! does not model (`<ros2_control>`, `<transmission>`, `<mujoco>`) and for error messages that
//! point at a line.
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use std::ops::Range;

#[derive(Debug, Clone)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub children: Vec<Element>,
    /// Concatenated text content directly inside this element, trimmed.
    pub text: String,
    /// 1-based line of the start tag.
    pub line: usize,
    /// Byte range of the whole element in the source.
    pub span: Range<usize>,
    /// Byte range between the start and end tags (empty for `<x/>`).
    pub inner: Range<usize>,
}

impl Element {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }
}

/// Text that is not a well-formed XML document, with the line where it goes wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlError {
    #[error("line {line}: malformed attribute in <{element}>: {reason}")]
    Attribute {
        line: usize,
        element: String,
        reason: String,
    },
    #[error("line {line}: more than one root element")]
    SecondRoot { line: usize },
    #[error("line {line}: a NUL character, which XML does not allow")]
    Nul { line: usize },
    #[error("line {line}: malformed XML: {reason}")]
    Malformed { line: usize, reason: String },
    #[error("line {line}: unexpected end tag")]
    UnexpectedEnd { line: usize },
    #[error("line {line}: <{element}> is never closed")]
    Unclosed { line: usize, element: String },
    #[error("the document has no root element")]
    NoRoot,
    #[error("line {line}: elements nested deeper than {limit}")]
    TooDeep { line: usize, limit: usize },
    #[error("line {line}: entity declarations are not accepted")]
    Entity { line: usize },
}

/// How deep elements may nest in any document read (the tree is built and dropped
/// recursively); requests get the tighter `limits.xml_depth`.
pub const MAX_DEPTH: usize = 1000;

fn line_of(source: &str, offset: usize) -> usize {
    source.as_bytes()[..offset.min(source.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn start_element(
    tag: &BytesStart,
    line: usize,
    start: usize,
    end: usize,
) -> Result<Element, XmlError> {
    let name = tag.name().as_ref().to_string();
    let mut attributes = Vec::new();
    let malformed = |reason: String| XmlError::Attribute {
        line,
        element: name.clone(),
        reason,
    };
    for attribute in tag.attributes() {
        let attribute = attribute.map_err(|e| malformed(e.to_string()))?;
        let key = attribute.key.as_ref().to_string();
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| malformed(format!("attribute '{key}': {e}")))?
            .to_string();
        attributes.push((key, value));
    }
    Ok(Element {
        name,
        attributes,
        children: Vec::new(),
        text: String::new(),
        line,
        span: start..end,
        inner: end..end,
    })
}

/// Puts a finished element under its parent, or makes it the root.
fn place(
    stack: &mut [Element],
    root: &mut Option<Element>,
    element: Element,
    line: usize,
) -> Result<(), XmlError> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None if root.is_none() => *root = Some(element),
        None => return Err(XmlError::SecondRoot { line }),
    }
    Ok(())
}

/// Line numbers of offsets that only grow (as the reader moves through the text): each is
/// counted from the last, not from the start, so a long text costs one pass.
struct Lines<'a> {
    source: &'a str,
    offset: usize,
    line: usize,
}

impl Lines<'_> {
    fn at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.source.len());
        if offset < self.offset {
            return line_of(self.source, offset);
        }
        self.line += self.source.as_bytes()[self.offset..offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        self.offset = offset;
        self.line
    }
}

/// Parses a whole document and returns its root element. Errors name the line.
pub fn parse(source: &str) -> Result<Element, XmlError> {
    parse_limited(source, MAX_DEPTH)
}

/// `parse`, refusing elements nested deeper than `max_depth`.
pub fn parse_limited(source: &str, max_depth: usize) -> Result<Element, XmlError> {
    // XML allows no NUL character, and MuJoCo takes model text as a C string.
    if let Some(at) = source.find('\0') {
        return Err(XmlError::Nul {
            line: line_of(source, at),
        });
    }
    let mut reader = Reader::from_str(source);
    reader.config_mut().trim_text(false);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut lines = Lines {
        source,
        offset: 0,
        line: 1,
    };
    loop {
        let start = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| XmlError::Malformed {
            line: line_of(source, reader.error_position() as usize),
            reason: e.to_string(),
        })?;
        let end = reader.buffer_position() as usize;
        match event {
            Event::Start(tag) => {
                let line = lines.at(start);
                if stack.len() >= max_depth {
                    return Err(XmlError::TooDeep {
                        line,
                        limit: max_depth,
                    });
                }
                stack.push(start_element(&tag, line, start, end)?)
            }
            Event::Empty(tag) => {
                let line = lines.at(start);
                let element = start_element(&tag, line, start, end)?;
                place(&mut stack, &mut root, element, line)?;
            }
            Event::End(_) => {
                let line = lines.at(start);
                let mut element = stack.pop().ok_or(XmlError::UnexpectedEnd { line })?;
                element.inner = element.span.end..start;
                element.span.end = end;
                element.text = element.text.trim().to_string();
                place(&mut stack, &mut root, element, line)?;
            }
            Event::DocType(doctype) if doctype.as_ref().contains("<!ENTITY") => {
                return Err(XmlError::Entity {
                    line: lines.at(start),
                });
            }
            Event::Text(text) => {
                if let Some(current) = stack.last_mut() {
                    current.text.push_str(&text.xml10_content());
                }
            }
            Event::CData(data) => {
                if let Some(current) = stack.last_mut() {
                    current.text.push_str(&data.into_inner());
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(current) = stack.last_mut() {
                    let name = reference.into_inner().to_string();
                    let resolved = match name.as_str() {
                        "lt" => "<",
                        "gt" => ">",
                        "amp" => "&",
                        "apos" => "'",
                        "quot" => "\"",
                        _ => "",
                    };
                    current.text.push_str(resolved);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(XmlError::Unclosed {
            line: open.line,
            element: open.name.clone(),
        });
    }
    root.ok_or(XmlError::NoRoot)
}

/// Escapes a value for an XML attribute.
pub fn escape(value: &str) -> String {
    quick_xml::escape::escape(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tree_with_lines_and_spans() {
        let src = "<robot name=\"r\">\n  <link name=\"a\"/>\n  <mujoco><option timestep=\"0.001\"/></mujoco>\n</robot>";
        let root = parse(src).unwrap();
        assert_eq!(root.name, "robot");
        assert_eq!(root.attr("name"), Some("r"));
        assert_eq!(root.children[0].line, 2);
        let mujoco = root.child("mujoco").unwrap();
        assert_eq!(&src[mujoco.inner.clone()], "<option timestep=\"0.001\"/>");
    }

    #[test]
    fn deep_nesting_and_entities_are_refused_and_long_texts_parse_in_one_pass() {
        let deep = "<a>".repeat(60_000) + &"</a>".repeat(60_000);
        assert_eq!(
            parse_limited(&deep, 256).unwrap_err(),
            XmlError::TooDeep {
                line: 1,
                limit: 256
            }
        );
        assert!(matches!(parse(&deep), Err(XmlError::TooDeep { .. })));
        let bomb = "<!DOCTYPE r [<!ENTITY a \"aaaa\">]>\n<r>&a;</r>";
        assert_eq!(parse(bomb).unwrap_err(), XmlError::Entity { line: 1 });
        // 200 000 elements on as many lines: counted once, not from the start each time.
        let long = format!("<r>\n{}</r>", "<link name='x'/>\n".repeat(200_000));
        let started = std::time::Instant::now();
        let root = parse(&long).unwrap();
        assert_eq!(root.children.len(), 200_000);
        assert_eq!(root.children[199_999].line, 200_001);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }

    #[test]
    fn malformed_xml_names_the_line() {
        let err = parse("<robot>\n<link name=\"a\">\n</robot>").unwrap_err();
        assert!(err.to_string().starts_with("line "), "{err}");
    }
}
