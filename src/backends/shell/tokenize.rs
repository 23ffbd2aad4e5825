//! A shell command line split into words and operators with POSIX-ish quoting; anything
//! whose meaning depends on expansion is refused with the reason.

use super::error::Underivable;
use std::iter::Peekable;
use std::str::Chars;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    Word(String),
    /// A command separator; `pipe` when the next command reads this one's output.
    Sep {
        pipe: bool,
    },
    /// `<` (read) or `>`/`>>` (write), followed by its target word.
    Redirect {
        write: bool,
    },
    /// `>&N`, `N>&M`, `2>/dev/null`-style fd plumbing whose target is not a file.
    FdDup,
}

/// Split `s` into words and operators. Anything whose meaning depends on expansion is
/// refused with the reason.
pub(super) fn tokenize(s: &str) -> Result<Vec<Tok>, Underivable> {
    let mut lx = Lexer {
        chars: s.chars().peekable(),
        out: Vec::new(),
        word: String::new(),
        in_word: false,
    };
    while let Some(c) = lx.chars.next() {
        match c {
            ' ' | '\t' => lx.end_word(),
            '\n' | ';' => lx.separator(false),
            '\'' => lx.single_quoted()?,
            '"' => lx.double_quoted()?,
            '\\' => lx.escaped(),
            '|' => lx.pipe(),
            '&' => lx.ampersand(),
            '<' => lx.input_redirection()?,
            '>' => lx.output_redirection()?,
            '#' if !lx.in_word => lx.comment(),
            x => {
                refuse_expansion(x, lx.in_word)?;
                lx.in_word = true;
                lx.word.push(x);
            }
        }
    }
    lx.end_word();
    Ok(lx.out)
}

/// The characters whose meaning outside quotes depends on an expansion.
fn refuse_expansion(c: char, in_word: bool) -> Result<(), Underivable> {
    Err(match c {
        '$' => Underivable::Substitution,
        '`' => Underivable::Backticks,
        '(' | ')' => Underivable::Subshell,
        '{' => Underivable::Brace,
        '*' | '?' | '[' => Underivable::Glob(c),
        '~' if !in_word => Underivable::Tilde,
        _ => return Ok(()),
    })
}

/// The tokens so far and the word being read.
struct Lexer<'s> {
    chars: Peekable<Chars<'s>>,
    out: Vec<Tok>,
    word: String,
    /// A word has begun (it may be empty: `''`).
    in_word: bool,
}

impl Lexer<'_> {
    /// The word being read, if any, is complete.
    fn end_word(&mut self) {
        if self.in_word {
            self.out.push(Tok::Word(std::mem::take(&mut self.word)));
            self.in_word = false;
        }
    }

    fn separator(&mut self, pipe: bool) {
        self.end_word();
        self.out.push(Tok::Sep { pipe });
    }

    /// Consume the next character if it is `c`.
    fn eat(&mut self, c: char) -> bool {
        self.chars.next_if_eq(&c).is_some()
    }

    /// `'…'`: every character literal.
    fn single_quoted(&mut self) -> Result<(), Underivable> {
        self.in_word = true;
        loop {
            match self.chars.next() {
                Some('\'') => return Ok(()),
                Some(x) => self.word.push(x),
                None => return Err(Underivable::UnterminatedQuote),
            }
        }
    }

    /// `"…"`: `\` escapes `"`, `\`, `$`, `` ` `` and a newline; an expansion is refused.
    fn double_quoted(&mut self) -> Result<(), Underivable> {
        self.in_word = true;
        loop {
            match self.chars.next() {
                Some('"') => return Ok(()),
                Some('\\') => match self.chars.next() {
                    Some(x @ ('"' | '\\' | '$' | '`')) => self.word.push(x),
                    Some('\n') => {}
                    Some(x) => {
                        self.word.push('\\');
                        self.word.push(x);
                    }
                    None => return Err(Underivable::UnterminatedQuote),
                },
                Some('$' | '`') => return Err(Underivable::QuotedExpansion),
                Some(x) => self.word.push(x),
                None => return Err(Underivable::UnterminatedQuote),
            }
        }
    }

    /// `\x` outside quotes: `x` literal; `\` newline joins lines.
    fn escaped(&mut self) {
        match self.chars.next() {
            Some('\n') | None => {}
            Some(x) => {
                self.in_word = true;
                self.word.push(x);
            }
        }
    }

    /// `|` and `|&` pipe into the next command; `||` separates.
    fn pipe(&mut self) {
        if self.eat('|') {
            self.separator(false);
        } else {
            self.eat('&');
            self.separator(true);
        }
    }

    /// `&>file` and `&>>file` write a file; `&` and `&&` separate.
    fn ampersand(&mut self) {
        if self.eat('>') {
            self.eat('>');
            self.end_word();
            self.out.push(Tok::Redirect { write: true });
            return;
        }
        self.eat('&');
        self.separator(false);
    }

    /// Before `<` or `>`: a word of digits is the descriptor (`2>`), not a word.
    fn end_word_before_redirection(&mut self) {
        if self.in_word && !self.word.is_empty() && self.word.chars().all(|d| d.is_ascii_digit()) {
            self.word.clear();
            self.in_word = false;
        } else {
            self.end_word();
        }
    }

    /// `<`: a read; `<<` (here-document) and `<(` (process substitution) are refused.
    fn input_redirection(&mut self) -> Result<(), Underivable> {
        self.end_word_before_redirection();
        match self.chars.peek() {
            Some('<') => return Err(Underivable::HereDocument),
            Some('(') => return Err(Underivable::ProcessSubstitution),
            _ => {}
        }
        self.out.push(Tok::Redirect { write: false });
        Ok(())
    }

    /// `>`, `>>`: a write; `>&…` see [`Self::descriptor_duplication`]; `>(` is refused.
    fn output_redirection(&mut self) -> Result<(), Underivable> {
        self.end_word_before_redirection();
        self.eat('>');
        if self.eat('&') {
            return self.descriptor_duplication();
        }
        if self.chars.peek() == Some(&'(') {
            return Err(Underivable::ProcessSubstitution);
        }
        self.out.push(Tok::Redirect { write: true });
        Ok(())
    }

    /// After `>&`: `>&2`, `2>&1`, `>&-` duplicate or close a descriptor (no file);
    /// `>&file` sends stdout and stderr to a file: a write.
    fn descriptor_duplication(&mut self) -> Result<(), Underivable> {
        let mut fd = false;
        while self
            .chars
            .next_if(|d| d.is_ascii_digit() || *d == '-')
            .is_some()
        {
            fd = true;
        }
        let ends = self
            .chars
            .peek()
            .is_none_or(|d| matches!(d, ' ' | '\t' | '\n' | ';' | '|' | '&'));
        match (fd, ends) {
            (true, true) => self.out.push(Tok::FdDup),
            (true, false) => return Err(Underivable::DuplicationWord),
            (false, _) => self.out.push(Tok::Redirect { write: true }),
        }
        Ok(())
    }

    /// `#` at a word's start: a comment, to the end of the line.
    fn comment(&mut self) {
        for x in self.chars.by_ref() {
            if x == '\n' {
                self.out.push(Tok::Sep { pipe: false });
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Tok {
        Tok::Word(s.into())
    }

    #[test]
    fn operators_redirections_and_quotes() {
        let (sep, pipe) = (Tok::Sep { pipe: false }, Tok::Sep { pipe: true });
        let (read, write) = (
            Tok::Redirect { write: false },
            Tok::Redirect { write: true },
        );
        assert_eq!(
            tokenize("a 2>&1 |& b >&f && c &>>g; d <e || x'y z'\"\\$\" # c\nf \\\n''").unwrap(),
            [
                w("a"),
                Tok::FdDup,
                pipe.clone(),
                w("b"),
                write.clone(),
                w("f"),
                sep.clone(),
                w("c"),
                write.clone(),
                w("g"),
                sep.clone(),
                w("d"),
                read,
                w("e"),
                sep.clone(),
                w("xy z$"),
                sep,
                w("f"),
                w(""),
            ]
        );
        assert_eq!(
            tokenize("a | b >> c").unwrap(),
            [w("a"), pipe, w("b"), write, w("c")]
        );
        // `#` and `~` inside a word are plain characters.
        assert_eq!(tokenize("x#y a~").unwrap(), [w("x#y"), w("a~")]);
    }

    #[test]
    fn expansions_are_refused_with_the_reason() {
        for (line, reason) in [
            ("cat $X", "variable or command substitution (`$`)"),
            ("cat \"$X\"", "expansion inside double quotes"),
            ("cat `x`", "command substitution (backticks)"),
            ("(cat a)", "subshell"),
            ("cat {a,b}", "brace expansion or group `{`"),
            ("cat *.rs", "unquoted glob `*`"),
            ("cat ~/x", "`~` expansion"),
            ("cat <<EOF", "here-document"),
            ("cat <(ls)", "process substitution"),
            ("tee >(ls)", "process substitution"),
            ("cat 'a", "unterminated quote"),
            ("cat a >&2x", "descriptor duplication followed by a word"),
        ] {
            assert_eq!(tokenize(line).unwrap_err().to_string(), reason, "{line}");
        }
    }
}
