//! rsp-rs hands each binding over as `format!("{:?}", solution)` (rsp_engine.rs:170), a
//! `QuerySolution`'s Rust `Debug` text (sparesults `debug_map` of oxrdf's derived `Debug`s):
//!
//! `{Variable { name: "room" }: NamedNode(NamedNode { iri: "http://ex.org/r1" }),
//!   Variable { name: "n" }: Literal(Literal(TypedLiteral { value: "3", datatype: NamedNode { iri: "…#integer" } }))}`
//!
//! This module reads that text back into variable -> N-Triples term; it is the only way the
//! crate's public API gives a binding out.

use oxigraph::model::{BlankNode, Literal, NamedNode, Term};

/// A value of Rust's `Debug` syntax.
#[derive(Debug, Clone, PartialEq)]
enum Debug {
    Text(String),
    Number(String),
    Map(Vec<(Debug, Debug)>),
    List(Vec<Debug>),
    Struct(String, Vec<(String, Debug)>),
    Tuple(String, Vec<Debug>),
    Unit(String),
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn skip_space(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected {:?} at byte {}", byte as char, self.at))
        }
    }

    /// `a, b, c` up to `close`, each read by `item`.
    fn items<T>(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Result<T, String>) -> Result<Vec<T>, String> {
        let mut out = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.at += 1;
                return Ok(out);
            }
            out.push(item(self)?);
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(c) if c == close => {}
                _ => return Err(format!("expected ',' or {:?} at byte {}", close as char, self.at)),
            }
        }
    }

    fn ident(&mut self) -> String {
        self.skip_space();
        let start = self.at;
        while self.at < self.text.len() && (self.text[self.at].is_ascii_alphanumeric() || self.text[self.at] == b'_') {
            self.at += 1;
        }
        String::from_utf8_lossy(&self.text[start..self.at]).into_owned()
    }

    fn value(&mut self) -> Result<Debug, String> {
        match self.peek() {
            Some(b'"') => self.string().map(Debug::Text),
            Some(b'{') => {
                self.at += 1;
                self.items(b'}', |r| {
                    let key = r.value()?;
                    r.expect(b':')?;
                    Ok((key, r.value()?))
                })
                .map(Debug::Map)
            }
            Some(b'[') => {
                self.at += 1;
                self.items(b']', Self::value).map(Debug::List)
            }
            Some(c) if c.is_ascii_digit() || c == b'-' => {
                let start = self.at;
                self.at += 1;
                while self.at < self.text.len() && (self.text[self.at].is_ascii_alphanumeric() || self.text[self.at] == b'.') {
                    self.at += 1;
                }
                Ok(Debug::Number(String::from_utf8_lossy(&self.text[start..self.at]).into_owned()))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let name = self.ident();
                match self.peek() {
                    Some(b'{') => {
                        self.at += 1;
                        self.items(b'}', |r| {
                            let field = r.ident();
                            r.expect(b':')?;
                            Ok((field, r.value()?))
                        })
                        .map(|fields| Debug::Struct(name, fields))
                    }
                    Some(b'(') => {
                        self.at += 1;
                        self.items(b')', Self::value).map(|values| Debug::Tuple(name, values))
                    }
                    _ => Ok(Debug::Unit(name)),
                }
            }
            other => Err(format!("unexpected {:?} at byte {}", other.map(|c| c as char), self.at)),
        }
    }

    /// A string in `str`'s `Debug` form: `\"`, `\\`, `\n`, `\r`, `\t`, `\0`, `\'`, `\u{…}`.
    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.text.get(self.at).ok_or("unterminated string")?;
            self.at += 1;
            match c {
                b'"' => return String::from_utf8(out).map_err(|e| e.to_string()),
                b'\\' => {
                    let e = *self.text.get(self.at).ok_or("unterminated escape")?;
                    self.at += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'0' => out.push(0),
                        b'\\' | b'"' | b'\'' => out.push(e),
                        b'u' => {
                            self.expect(b'{')?;
                            let start = self.at;
                            while self.text.get(self.at).is_some_and(|c| *c != b'}') {
                                self.at += 1;
                            }
                            let hex = std::str::from_utf8(&self.text[start..self.at]).map_err(|e| e.to_string())?;
                            self.at += 1;
                            let code = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                            let ch = char::from_u32(code).ok_or_else(|| format!("bad code point {hex}"))?;
                            out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                        other => return Err(format!("unknown escape \\{}", other as char)),
                    }
                }
                _ => out.push(c),
            }
        }
    }
}

fn field<'a>(fields: &'a [(String, Debug)], name: &str) -> Result<&'a Debug, String> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v).ok_or_else(|| format!("no field {name}"))
}

fn text(value: &Debug) -> Result<&str, String> {
    match value {
        Debug::Text(s) => Ok(s),
        other => Err(format!("expected a string, got {other:?}")),
    }
}

fn named_node(value: &Debug) -> Result<NamedNode, String> {
    match value {
        Debug::Struct(name, fields) if name == "NamedNode" => Ok(NamedNode::new_unchecked(text(field(fields, "iri")?)?)),
        other => Err(format!("expected a NamedNode, got {other:?}")),
    }
}

fn bytes_until_nul(value: &Debug) -> Result<String, String> {
    let Debug::List(items) = value else { return Err(format!("expected bytes, got {value:?}")) };
    let mut out = Vec::new();
    for item in items {
        let Debug::Number(n) = item else { return Err(format!("expected a byte, got {item:?}")) };
        let byte: u8 = n.parse().map_err(|_| format!("bad byte {n}"))?;
        if byte == 0 {
            break;
        }
        out.push(byte);
    }
    String::from_utf8(out).map_err(|e| e.to_string())
}

fn term(value: &Debug) -> Result<Term, String> {
    let Debug::Tuple(kind, inner) = value else { return Err(format!("expected a term, got {value:?}")) };
    match (kind.as_str(), inner.as_slice()) {
        ("NamedNode", [node]) => Ok(named_node(node)?.into()),
        ("BlankNode", [Debug::Tuple(b, content)]) if b == "BlankNode" => match content.as_slice() {
            [Debug::Tuple(k, id)] if k == "Named" && id.len() == 1 => Ok(BlankNode::new_unchecked(text(&id[0])?).into()),
            [Debug::Struct(k, fields)] if k == "Anonymous" => match field(fields, "str")? {
                Debug::Tuple(s, bytes) if s == "IdStr" && bytes.len() == 1 => {
                    Ok(BlankNode::new_unchecked(bytes_until_nul(&bytes[0])?).into())
                }
                other => Err(format!("unexpected blank node id {other:?}")),
            },
            other => Err(format!("unexpected blank node {other:?}")),
        },
        ("Literal", [Debug::Tuple(l, content)]) if l == "Literal" => match content.as_slice() {
            [Debug::Tuple(k, v)] if k == "String" && v.len() == 1 => Ok(Literal::new_simple_literal(text(&v[0])?).into()),
            [Debug::Struct(k, fields)] if k == "LanguageTaggedString" => Ok(Literal::new_language_tagged_literal_unchecked(
                text(field(fields, "value")?)?,
                text(field(fields, "language")?)?,
            )
            .into()),
            [Debug::Struct(k, fields)] if k == "TypedLiteral" => {
                Ok(Literal::new_typed_literal(text(field(fields, "value")?)?, named_node(field(fields, "datatype")?)?).into())
            }
            other => Err(format!("unexpected literal {other:?}")),
        },
        _ => Err(format!("unsupported term {value:?}")),
    }
}

/// The `Debug` text of one solution as (variable name, N-Triples term) pairs, in its order.
pub fn parse(solution: &str) -> Result<Vec<(String, String)>, String> {
    let mut reader = Reader { text: solution.as_bytes(), at: 0 };
    let value = reader.value()?;
    if reader.peek().is_some() {
        return Err(format!("trailing text at byte {}", reader.at));
    }
    let Debug::Map(entries) = value else { return Err("expected a map".into()) };
    entries
        .iter()
        .map(|(key, value)| match key {
            Debug::Struct(name, fields) if name == "Variable" => Ok((text(field(fields, "name")?)?.to_string(), term(value)?.to_string())),
            other => Err(format!("expected a Variable, got {other:?}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse;
    use oxigraph::model::{BlankNode, Literal, NamedNode, Term, Variable};
    use oxigraph::sparql::QuerySolution;

    fn debug_of(pairs: Vec<(&str, Term)>) -> String {
        let (variables, values): (Vec<Variable>, Vec<Option<Term>>) =
            pairs.into_iter().map(|(v, t)| (Variable::new_unchecked(v), Some(t))).unzip();
        format!("{:?}", QuerySolution::from((variables, values)))
    }

    #[test]
    fn reads_back_every_kind_of_term_as_n_triples() {
        let xsd_int = NamedNode::new_unchecked("http://www.w3.org/2001/XMLSchema#integer");
        let text = debug_of(vec![
            ("iri", NamedNode::new_unchecked("http://ex.org/r1").into()),
            ("plain", Literal::new_simple_literal("a \"quoted\", {braced}\\ line\nnext\té").into()),
            ("lang", Literal::new_language_tagged_literal_unchecked("chat", "fr").into()),
            ("n", Literal::new_typed_literal("3", xsd_int).into()),
            ("named", BlankNode::new_unchecked("b0").into()),
            ("anon", BlankNode::default().into()),
        ]);
        let read = parse(&text).unwrap();
        assert_eq!(read[0], ("iri".into(), "<http://ex.org/r1>".into()));
        assert_eq!(read[1], ("plain".into(), r#""a \"quoted\", {braced}\\ line\nnext\té""#.into()));
        assert_eq!(read[2], ("lang".into(), "\"chat\"@fr".into()));
        assert_eq!(read[3], ("n".into(), "\"3\"^^<http://www.w3.org/2001/XMLSchema#integer>".into()));
        assert_eq!(read[4], ("named".into(), "_:b0".into()));
        assert!(read[5].1.starts_with("_:") && read[5].1.len() > 3, "{:?}", read[5]);
    }

    #[test]
    fn an_empty_solution_is_an_empty_binding() {
        assert_eq!(parse("{}").unwrap(), vec![]);
    }
}
