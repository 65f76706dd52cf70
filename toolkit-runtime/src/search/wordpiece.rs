//! BERT's uncased WordPiece tokenizer: text to the token ids a sentence-embedding model reads.
//!
//! Written here rather than taken from the `tokenizers` crate: its default build compiles
//! Oniguruma (C), and even without it it brings some thirty crates (rayon, regex, esaxx,
//! spm_precompiled…) into every build with embeddings on, for one algorithm that a BERT
//! vocabulary needs and that fits on a screen. It does what `tokenizers`' `BertNormalizer`,
//! `BertPreTokenizer` and `WordPiece` do for an uncased model (`do_lower_case`, accents
//! stripped, Chinese characters split), and the tests check it against ids `tokenizers` gave for
//! all-MiniLM-L6-v2's vocabulary.

use std::collections::HashMap;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// A word longer than this many characters is one unknown token (as in `tokenizers`).
const MAX_WORD_CHARACTERS: usize = 100;

/// A BERT vocabulary and the WordPiece algorithm over it.
#[derive(Clone, Debug)]
pub(crate) struct WordPiece {
    vocabulary: HashMap<String, u32>,
    /// The vocabulary's lines, by id.
    lines: Vec<String>,
    unknown: u32,
    classify: u32,
    separator: u32,
}

impl WordPiece {
    /// The tokenizer of a `vocab.txt`: one token a line, its id its line number.
    pub(crate) fn from_vocabulary(text: &str) -> Result<Self, String> {
        let mut vocabulary = HashMap::new();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for (id, token) in lines.iter().enumerate() {
            let id = u32::try_from(id).map_err(|_| "the vocabulary is too long".to_owned())?;
            vocabulary.entry(token.clone()).or_insert(id);
        }
        let special = |token: &str| {
            vocabulary
                .get(token)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {token} token"))
        };
        Ok(Self {
            unknown: special("[UNK]")?,
            classify: special("[CLS]")?,
            separator: special("[SEP]")?,
            vocabulary,
            lines,
        })
    }

    /// How many tokens the vocabulary holds (its lines).
    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The ids of the marks that begin and end a text: `[CLS]` and `[SEP]`.
    pub(crate) fn marks(&self) -> (u32, u32) {
        (self.classify, self.separator)
    }

    /// Each token with its id, in the vocabulary's order.
    pub(crate) fn tokens(&self) -> impl Iterator<Item = (&str, u32)> {
        (0u32..)
            .zip(&self.lines)
            .map(|(id, token)| (token.as_str(), id))
    }

    /// The vocabulary as `vocab.txt` holds it: one token a line, each line ended (so that an
    /// empty last token is read back).
    pub(crate) fn vocabulary_text(&self) -> String {
        self.lines
            .iter()
            .flat_map(|line| [line.as_str(), "\n"])
            .collect()
    }

    /// The ids of `text` between `[CLS]` and `[SEP]`, at most `max_tokens` in all (at least the
    /// two): what does not fit is dropped, and the text after it is not read.
    pub(crate) fn encode(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let room = max_tokens.max(2) - 2;
        let mut ids = vec![self.classify];
        'words: for word in normalize(text).split(char::is_whitespace) {
            for piece in split_punctuation(word) {
                if ids.len() > room {
                    break 'words;
                }
                self.pieces(piece, &mut ids);
            }
        }
        ids.truncate(room + 1);
        ids.push(self.separator);
        ids
    }

    /// Appends the WordPiece ids of one word: the longest vocabulary entry that begins it, then
    /// the longest `##` entry that goes on from there, and so on; a word that cannot be read so
    /// is one unknown token.
    fn pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARACTERS {
            ids.push(self.unknown);
            return;
        }
        let before = ids.len();
        let mut start = 0;
        let mut candidate = String::with_capacity(word.len() + 2);
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocabulary.get(&candidate) {
                    found = Some(id);
                    break;
                }
                // One character shorter (on a character boundary).
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(at, _)| at);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(before);
                    ids.push(self.unknown);
                    return;
                }
            }
        }
    }
}

/// BERT's normalisation for an uncased model: control characters dropped, every kind of space a
/// space, each Chinese character a word of its own, accents stripped, lowercase.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for character in text.chars() {
        if character == '\0' || character == '\u{fffd}' || is_control(character) {
            continue;
        }
        if character.is_whitespace() {
            cleaned.push(' ');
        } else if is_chinese(character) {
            cleaned.push(' ');
            cleaned.push(character);
            cleaned.push(' ');
        } else {
            cleaned.push(character);
        }
    }
    cleaned
        .nfd()
        .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The parts of a word with each punctuation character a part of its own.
fn split_punctuation(word: &str) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (at, character) in word.char_indices() {
        if is_punctuation(character) {
            if start < at {
                parts.push(&word[start..at]);
            }
            let end = at + character.len_utf8();
            parts.push(&word[at..end]);
            start = end;
        }
    }
    if start < word.len() {
        parts.push(&word[start..]);
    }
    parts.into_iter()
}

fn is_control(character: char) -> bool {
    !matches!(character, '\t' | '\n' | '\r')
        && matches!(
            get_general_category(character),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::Unassigned
                | GeneralCategory::PrivateUse
        )
}

fn is_punctuation(character: char) -> bool {
    character.is_ascii_punctuation()
        || matches!(
            get_general_category(character),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// The CJK ideograph blocks BERT splits character by character.
fn is_chinese(character: char) -> bool {
    matches!(
        u32::from(character),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B820..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> WordPiece {
        let vocabulary =
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\nplay\n##ing\n##ed\nun\n##aff\n##able\n,\n!\ncafe\n中\n";
        WordPiece::from_vocabulary(vocabulary).expect("a vocabulary")
    }

    #[test]
    fn the_vocabulary_text_reads_back_as_the_same_vocabulary() {
        for text in ["[UNK]\n[CLS]\n[SEP]\nfoo", "[UNK]\n[CLS]\n[SEP]\nfoo\n\n"] {
            let words = WordPiece::from_vocabulary(text).expect("a vocabulary");
            let again = WordPiece::from_vocabulary(&words.vocabulary_text()).expect("again");
            assert_eq!(again.len(), words.len(), "{text:?}");
            assert_eq!(again.vocabulary_text(), words.vocabulary_text());
        }
    }

    #[test]
    fn words_split_into_the_longest_pieces_the_vocabulary_has() {
        let words = tokenizer();
        assert_eq!(
            words.encode("Playing, unaffable!", 64),
            [2, 4, 5, 10, 7, 8, 9, 11, 3]
        );
        assert_eq!(words.encode("played  PLAY", 64), [2, 4, 6, 4, 3]);
    }

    #[test]
    fn what_the_vocabulary_cannot_spell_is_unknown_and_accents_are_stripped() {
        let words = tokenizer();
        assert_eq!(words.encode("playz café", 64), [2, 1, 12, 3]);
        assert_eq!(words.encode(&"a".repeat(101), 64), [2, 1, 3]);
        assert_eq!(words.encode("中中\u{0}", 64), [2, 13, 13, 3]);
    }

    #[test]
    fn at_most_max_tokens_are_given_with_both_marks() {
        let words = tokenizer();
        let long = "play ".repeat(1_000);
        let ids = words.encode(&long, 8);
        assert_eq!(ids, [2, 4, 4, 4, 4, 4, 4, 3]);
        // A word's pieces are cut too.
        assert_eq!(words.encode("playing playing", 4), [2, 4, 5, 3]);
        assert_eq!(words.encode("play", 0), [2, 3]);
    }

    /// all-MiniLM-L6-v2's vocabulary, as `scripts/install-test-peers` installs it.
    fn minilm() -> WordPiece {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/peers/all-minilm-l6-v2/vocab.txt"
        );
        let vocabulary = std::fs::read_to_string(path).expect("scripts/install-test-peers");
        WordPiece::from_vocabulary(&vocabulary).expect("a vocabulary")
    }

    #[test]
    fn the_ids_are_those_tokenizers_gives_for_minilm() {
        // Each expected list is what the `tokenizers` library (Python, 0.23.3) gave for the model's
        // tokenizer.json, without truncation or padding.
        let words = minilm();
        assert_eq!(
            words.encode("What will the weather be tomorrow?", 512),
            [101, 2054, 2097, 1996, 4633, 2022, 4826, 1029, 102]
        );
        assert_eq!(
            words.encode(
                "Naïve café-owners' GETPullRequestReviews, 3.5kg (東京) — “quoted” text\u{ad}!",
                512
            ),
            [
                101, 15743, 7668, 1011, 5608, 1005, 2131, 14289, 3363, 2890, 15500, 2890, 8584,
                2015, 1010, 1017, 1012, 1019, 2243, 2290, 1006, 1879, 1755, 1007, 1517, 1523, 9339,
                1524, 3793, 999, 102
            ]
        );
        assert_eq!(
            words.encode("supercalifragilisticexpialidocious unaffable", 512),
            [
                101, 3565, 9289, 10128, 29181, 24411, 4588, 10288, 19312, 21273, 10085, 6313,
                14477, 20961, 3468, 102
            ]
        );
    }

    #[test]
    fn a_vocabulary_without_the_marks_is_refused() {
        assert!(WordPiece::from_vocabulary("a\nb\n").is_err());
    }
}
