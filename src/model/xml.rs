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
}

fn line_of(source: &str, offset: usize) -> usize {
    source.as_bytes()[..offset.min(source.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn start_element(
    source: &str,
    tag: &BytesStart,
    start: usize,
    end: usize,
) -> Result<Element, XmlError> {
    let name = tag.name().as_ref().to_string();
    let mut attributes = Vec::new();
    let malformed = |reason: String| XmlError::Attribute {
        line: line_of(source, start),
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
        line: line_of(source, start),
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

/// Parses a whole document and returns its root element. Errors name the line.
pub fn parse(source: &str) -> Result<Element, XmlError> {
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
    loop {
        let start = reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| XmlError::Malformed {
            line: line_of(source, reader.error_position() as usize),
            reason: e.to_string(),
        })?;
        let end = reader.buffer_position() as usize;
        match event {
            Event::Start(tag) => stack.push(start_element(source, &tag, start, end)?),
            Event::Empty(tag) => {
                let element = start_element(source, &tag, start, end)?;
                place(&mut stack, &mut root, element, line_of(source, start))?;
            }
            Event::End(_) => {
                let mut element = stack.pop().ok_or_else(|| XmlError::UnexpectedEnd {
                    line: line_of(source, start),
                })?;
                element.inner = element.span.end..start;
                element.span.end = end;
                element.text = element.text.trim().to_string();
                place(&mut stack, &mut root, element, line_of(source, start))?;
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
    fn malformed_xml_names_the_line() {
        let err = parse("<robot>\n<link name=\"a\">\n</robot>").unwrap_err();
        assert!(err.to_string().starts_with("line "), "{err}");
    }
}
