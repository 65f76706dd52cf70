//! Reading names and text as words.

use rust_stemmers::{Algorithm, Stemmer};

/// The words of a tool's name, lowercase, whether it is written `create_issue`, `create-issue`,
/// `createIssue` or `CreateIssue` (and `HTTPServer` reads as `http`, `server`).
pub(crate) fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let characters: Vec<char> = name.chars().collect();
    for (index, &character) in characters.iter().enumerate() {
        if !character.is_alphanumeric() {
            flush(&mut current, &mut words);
            continue;
        }
        let previous = index.checked_sub(1).map(|i| characters[i]);
        let next = characters.get(index + 1).copied();
        let boundary = match previous {
            Some(previous) if character.is_uppercase() => {
                previous.is_lowercase()
                    || previous.is_ascii_digit()
                    || (previous.is_uppercase() && next.is_some_and(char::is_lowercase))
            }
            Some(previous) => {
                character.is_ascii_digit() != previous.is_ascii_digit()
                    && previous.is_alphanumeric()
            }
            None => false,
        };
        if boundary {
            flush(&mut current, &mut words);
        }
        current.extend(character.to_lowercase());
    }
    flush(&mut current, &mut words);
    words
}

/// The words of free text, lowercase, split at anything that is not a letter or a digit.
pub(crate) fn text_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

fn flush(current: &mut String, words: &mut Vec<String>) {
    if !current.is_empty() {
        words.push(std::mem::take(current));
    }
}

/// The English Snowball stemmer, which reads `issues`, `issued` and `issue` as one word.
pub(crate) fn stemmer() -> Stemmer {
    Stemmer::create(Algorithm::English)
}

/// Whether `word` is a common English word that says little of what a tool does ("can", "the",
/// "please"), or a word of asking rather than of the task ("provide", "information", "tool",
/// "plugin"): questions to a model are full of them. (The list grew on MetaTool's development
/// half, and holds on its test half: `examples/search_eval.rs`.)
pub(crate) fn is_common(word: &str) -> bool {
    const COMMON: &[&str] = &[
        "a",
        "able",
        "about",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "ask",
        "assist",
        "assistance",
        "at",
        "be",
        "been",
        "being",
        "best",
        "but",
        "by",
        "can",
        "could",
        "currently",
        "d",
        "detailed",
        "details",
        "did",
        "do",
        "does",
        "each",
        "every",
        "find",
        "for",
        "from",
        "get",
        "give",
        "go",
        "good",
        "help",
        "here",
        "hey",
        "hi",
        "how",
        "i",
        "if",
        "im",
        "in",
        "information",
        "interested",
        "into",
        "is",
        "it",
        "its",
        "just",
        "know",
        "let",
        "like",
        "ll",
        "look",
        "looking",
        "m",
        "make",
        "many",
        "may",
        "me",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "need",
        "no",
        "not",
        "of",
        "on",
        "one",
        "or",
        "our",
        "please",
        "plugin",
        "possible",
        "provide",
        "recently",
        "s",
        "see",
        "shall",
        "should",
        "show",
        "so",
        "some",
        "specific",
        "sure",
        "t",
        "tell",
        "than",
        "thanks",
        "that",
        "the",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "too",
        "tool",
        "tools",
        "use",
        "using",
        "ve",
        "very",
        "want",
        "was",
        "way",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "wondering",
        "would",
        "yes",
        "you",
        "your",
    ];
    COMMON.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_in_words_however_they_are_written() {
        for name in [
            "create_issue",
            "create-issue",
            "createIssue",
            "CreateIssue",
            "CREATE_ISSUE",
        ] {
            assert_eq!(name_words(name), ["create", "issue"], "{name}");
        }
        assert_eq!(name_words("HTTPServer2go"), ["http", "server", "2", "go"]);
        assert_eq!(
            name_words("github__list_repos"),
            ["github", "list", "repos"]
        );
        assert_eq!(name_words(""), Vec::<String>::new());
    }

    #[test]
    fn text_reads_as_lowercase_words() {
        let words: Vec<_> = text_words("Lists the user's Repos, 100 at a time.").collect();
        assert_eq!(
            words,
            [
                "lists", "the", "user", "s", "repos", "100", "at", "a", "time"
            ]
        );
    }
}
