//! Finding tools by what they do: [`SearchIndex`].
//!
//! Two rankings share the seed's guarantees: a query word scores for a word of a tool's name that
//! is the same or that it begins, and for a word of its description, the name counting most; a
//! tool that scores nothing does not match; a query with no words lists the tools in order.
//!
//! - [`Ranking::Words`] is the seed's plain match on words, kept as the baseline.
//! - [`Ranking::Relevance`] (the default) is BM25F over four fields — the tool's name, its
//!   source's name, its description, and its parameters' names and descriptions — with English
//!   stemming, so that `issues` finds `create_issue` and a rare word counts for more than a common
//!   one. A query word that only begins a word of the tool counts a little less than one that is
//!   the same.

use std::collections::HashMap as StdHashMap;

/// Maps hashed with foldhash: the index hashes every word of every tool, and SipHash's defence
/// against flooding buys nothing for words the host's own catalog holds.
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::FixedState>;

use serde_json::Value;

#[cfg(feature = "search-embeddings")]
use super::embedder::EmbedderError;
#[cfg(feature = "search-embeddings")]
use super::semantic::{MeaningModel, Semantic, fuse};
use super::words::{is_common, name_words, stemmer, text_words};
use toolkit_core::ToolDefinition;

/// How a [`SearchIndex`] ranks the tools that match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ranking {
    /// BM25F over name, source, description and parameters, with stemming.
    #[default]
    Relevance,
    /// The seed's plain match on words: 3 for each name word a query word is or begins, 1 for
    /// each such description word.
    Words,
}

/// The fields of a tool that a search reads, with their weight and length normalisation.
#[derive(Clone, Copy, Debug)]
enum Field {
    Name = 0,
    Source = 1,
    Description = 2,
    Parameters = 3,
}

const FIELDS: usize = 4;
const WEIGHT: [f32; FIELDS] = [3.0, 1.5, 1.0, 0.6];
const LENGTH_NORMALISATION: [f32; FIELDS] = [0.3, 0.0, 0.3, 0.75];
/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// What a query word that only begins a word of the tool's name counts, against one that is the
/// word (measured on MetaTool: more than this lets short words rank too much).
const PREFIX_MATCH: f32 = 0.3;
/// The fewest letters of a word of a tool's name that a longer query word it begins reaches.
const MIN_ABBREVIATION: usize = 3;
/// What a query word that is a common English word counts, against any other: enough to match,
/// as the seed requires of every word, too little to rank by.
const COMMON_WORD: f32 = 0.05;

/// The word margin ([`SearchIndex::word_margin`]) from which a hybrid index trusts the ranking on
/// words and does not embed the query, by default: none (every query is embedded). Measured on
/// MetaTool (`examples/search_eval.rs`, `SEARCH_EVAL_MARGINS=1`), a margin of 1.5 spares 38 % of
/// queries the model for recall@5 0.759 against 0.794; 1.3 spares 52 % for 0.739.
pub const CONFIDENT_MARGIN: f32 = f32::INFINITY;

/// The most characters of a query a search reads (about 150 words); the rest of a longer query
/// is not read, so that what one query costs is bounded whatever its length. `tool_search`
/// refuses a longer query outright (its schema's `maxLength`).
pub const MAX_QUERY_CHARS: usize = 1024;

/// The best score over the second best (`f32::INFINITY` with one score above zero, 0 with none).
fn margin(scores: &[f32]) -> f32 {
    let (mut first, mut second) = (0.0f32, 0.0f32);
    for &score in scores {
        if score > first {
            second = first;
            first = score;
        } else if score > second {
            second = score;
        }
    }
    match (first > 0.0, second > 0.0) {
        (false, _) => 0.0,
        (true, false) => f32::INFINITY,
        (true, true) => first / second,
    }
}

/// One term's occurrences in one tool: how often in each field.
#[derive(Clone, Copy, Debug)]
struct Posting {
    tool: u32,
    frequency: [u16; FIELDS],
}

/// The words of one tool, kept for [`Ranking::Words`].
#[derive(Clone, Debug, Default)]
struct PlainWords {
    name: Vec<String>,
    description: Vec<String>,
}

/// An index of tools to search, built once from their definitions.
///
/// ```
/// use serde_json::json;
/// use toolkit_runtime::{search::SearchIndex, ToolDefinition};
///
/// let tool = |name: &str, description: &str| {
///     ToolDefinition::new(name, json!({ "type": "object" }).as_object().cloned().unwrap_or_default())
///         .map(|d| d.with_description(description))
/// };
/// let definitions = [
///     tool("github__create_issue", "Opens an issue in a repository.")?,
///     tool("github__list_pulls", "Lists pull requests.")?,
///     tool("weather__forecast", "Tells the weather to come.")?,
/// ];
/// let index = SearchIndex::new(&definitions);
/// let found = index.search("open issues", 5);
/// assert_eq!(found.tools, [0]);
/// assert_eq!(found.matched, 1);
/// assert_eq!(index.search("", 2).tools, [0, 1]);
/// # Ok::<(), toolkit_runtime::definition::DefinitionError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SearchIndex {
    ranking: Ranking,
    tools: usize,
    /// Every word of every tool, lowercase and unstemmed, sorted, with its term: what a query
    /// word that begins a word is looked up in.
    words: Vec<(String, u32)>,
    /// A term (a stemmed word) to its number.
    terms: HashMap<String, u32>,
    postings: Vec<Vec<Posting>>,
    lengths: Vec<[u16; FIELDS]>,
    average_length: [f32; FIELDS],
    plain: Vec<PlainWords>,
    /// Each tool's meaning, for a hybrid index.
    #[cfg(feature = "search-embeddings")]
    semantic: Option<Semantic>,
    /// The word margin from which a hybrid index ranks on words alone, the query not embedded.
    #[cfg(feature = "search-embeddings")]
    confident_margin: f32,
}

/// The tools a search found, best first, as indices into the definitions the index was built
/// from, with how many matched in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The indices of the tools found, best first, at most the limit.
    pub tools: Vec<usize>,
    /// How many tools matched (at least `tools.len()`).
    pub matched: usize,
    /// How many tools there are.
    pub available: usize,
}

impl SearchIndex {
    /// The index of these definitions, ranked by [`Ranking::Relevance`].
    pub fn new<'a>(definitions: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        Self::with_ranking(definitions, Ranking::default())
    }

    /// The index of these definitions, ranked by `ranking`.
    pub fn with_ranking<'a>(
        definitions: impl IntoIterator<Item = &'a ToolDefinition>,
        ranking: Ranking,
    ) -> Self {
        let mut index = Self {
            ranking,
            tools: 0,
            words: Vec::new(),
            terms: HashMap::default(),
            postings: Vec::new(),
            lengths: Vec::new(),
            average_length: [0.0; FIELDS],
            plain: Vec::new(),
            #[cfg(feature = "search-embeddings")]
            semantic: None,
            #[cfg(feature = "search-embeddings")]
            confident_margin: CONFIDENT_MARGIN,
        };
        let stemmer = stemmer();
        let mut word_terms: HashMap<String, u32> = HashMap::default();
        for (tool, definition) in definitions.into_iter().enumerate() {
            index.tools += 1;
            let description = definition.description.as_deref().unwrap_or_default();
            if ranking == Ranking::Words {
                index.plain.push(PlainWords {
                    name: name_words(definition.name()),
                    description: text_words(description).collect(),
                });
                continue;
            }
            let (source, name) = match definition.name().split_once("__") {
                Some((source, name)) => (name_words(source), name_words(name)),
                None => (Vec::new(), name_words(definition.name())),
            };
            let mut parameters = Vec::new();
            if let Some(Value::Object(properties)) = definition.input_schema().get("properties") {
                for (property, schema) in properties {
                    parameters.extend(name_words(property));
                    if let Some(text) = schema.get("description").and_then(Value::as_str) {
                        parameters.extend(text_words(text));
                    }
                }
            }
            let fields = [name, source, text_words(description).collect(), parameters];
            // A tool has a few dozen words: a list searched in place beats a map here.
            let mut counts: Vec<(u32, [u16; FIELDS])> = Vec::new();
            let mut lengths = [0u16; FIELDS];
            for (field, words) in fields.into_iter().enumerate() {
                lengths[field] = u16::try_from(words.len()).unwrap_or(u16::MAX);
                for word in words {
                    let term = match word_terms.get(&word) {
                        Some(&term) => term,
                        None => {
                            let stem = stemmer.stem(&word).into_owned();
                            let next = u32::try_from(index.terms.len()).unwrap_or(u32::MAX);
                            let term = *index.terms.entry(stem).or_insert(next);
                            if term == next {
                                index.postings.push(Vec::new());
                            }
                            word_terms.insert(word, term);
                            term
                        }
                    };
                    let at = match counts.iter().position(|(known, _)| *known == term) {
                        Some(at) => at,
                        None => {
                            counts.push((term, [0; FIELDS]));
                            counts.len() - 1
                        }
                    };
                    let count = &mut counts[at].1[field];
                    *count = count.saturating_add(1);
                }
            }
            let tool = u32::try_from(tool).unwrap_or(u32::MAX);
            for (term, frequency) in counts {
                index.postings[term as usize].push(Posting { tool, frequency });
            }
            index.lengths.push(lengths);
        }
        if !index.lengths.is_empty() {
            for field in 0..FIELDS {
                let total: f32 = index.lengths.iter().map(|l| f32::from(l[field])).sum();
                index.average_length[field] = (total / index.lengths.len() as f32).max(1.0);
            }
        }
        index.words = word_terms.into_iter().collect();
        index.words.sort_unstable();
        index
    }

    /// A hybrid index of these definitions (feature `search-embeddings`): ranked by
    /// [`Ranking::Relevance`] fused with the similarity of meaning between the query and each
    /// tool's name and description, as `model` reads them (an [`Embedder`](crate::search::Embedder) or a
    /// [`StaticEmbedder`](crate::search::StaticEmbedder), in an `Arc` or not). Every tool is embedded
    /// here, once; each search embeds its query. A tool that shares no word with the query
    /// matches when it comes near it in meaning. A query the model fails to embed, or that has
    /// no meaning to the model (static vectors of common words only), is ranked on words alone.
    #[cfg(feature = "search-embeddings")]
    pub fn hybrid<'a>(
        definitions: impl IntoIterator<Item = &'a ToolDefinition>,
        model: impl Into<MeaningModel>,
    ) -> Result<Self, EmbedderError> {
        let definitions: Vec<&ToolDefinition> = definitions.into_iter().collect();
        let semantic = Semantic::new(model.into(), &definitions)?;
        let mut index = Self::with_ranking(definitions, Ranking::Relevance);
        index.semantic = Some(semantic);
        Ok(index)
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.tools
    }

    /// Whether the index holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools == 0
    }

    /// How far the best tool on words stands ahead of the next for `query`: its score over the
    /// second's (`f32::INFINITY` when it alone matches, 0 when none does). A hybrid index ranks a
    /// query whose margin is at least its confident margin on words alone, without embedding it
    /// (see [`SearchIndex::with_confident_margin`]).
    pub fn word_margin(&self, query: &str) -> f32 {
        let query: Vec<String> = text_words(query).collect();
        if query.is_empty() {
            return 0.0;
        }
        margin(&self.word_scores(&query))
    }

    /// The word margin from which this hybrid index ranks a query on words alone, without
    /// embedding it ([`CONFIDENT_MARGIN`] by default; `f32::INFINITY` embeds every query, even
    /// one that a single tool matches on words, whose margin is infinite).
    #[cfg(feature = "search-embeddings")]
    #[must_use]
    pub fn with_confident_margin(mut self, margin: f32) -> Self {
        self.confident_margin = margin;
        self
    }

    fn word_scores(&self, query: &[String]) -> Vec<f32> {
        match self.ranking {
            Ranking::Relevance => self.relevance(query),
            Ranking::Words => self.plain_scores(query),
        }
    }

    /// The tools that match `query` (its first [`MAX_QUERY_CHARS`] characters), best first (ties
    /// in the tools' order), at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Found {
        let query = query
            .char_indices()
            .nth(MAX_QUERY_CHARS)
            .map_or(query, |(end, _)| &query[..end]);
        #[cfg(feature = "search-embeddings")]
        let text = query;
        let query: Vec<String> = text_words(query).collect();
        if query.is_empty() {
            return Found {
                tools: (0..self.tools.min(limit)).collect(),
                matched: self.tools,
                available: self.tools,
            };
        }
        let scores = self.word_scores(&query);
        // A finite margin only: with none set, even a query only one tool matches on words is
        // embedded (meaning may find others).
        #[cfg(feature = "search-embeddings")]
        let scores =
            if self.confident_margin.is_finite() && margin(&scores) >= self.confident_margin {
                scores
            } else {
                self.with_meaning(text, scores, limit)
            };
        let mut matched: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, score)| *score > 0.0)
            .collect();
        let count = matched.len();
        let by_score = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if limit < matched.len() {
            matched.select_nth_unstable_by(limit, by_score);
            matched.truncate(limit);
        }
        matched.sort_unstable_by(by_score);
        Found {
            tools: matched.into_iter().map(|(tool, _)| tool).collect(),
            matched: count,
            available: self.tools,
        }
    }

    /// The scores on words fused with the similarity of meaning, in a hybrid index: exact for
    /// the best `limit` tools (see [`fuse`]).
    #[cfg(feature = "search-embeddings")]
    fn with_meaning(&self, query: &str, scores: Vec<f32>, limit: usize) -> Vec<f32> {
        let Some(semantic) = &self.semantic else {
            return scores;
        };
        match semantic.similarities(query) {
            Ok(Some(similarities)) => fuse(&scores, &similarities, semantic.weight(), limit),
            Ok(None) => scores,
            Err(error) => {
                tracing::warn!(%error, "tool search ranks this query on words alone");
                scores
            }
        }
    }

    fn relevance(&self, query: &[String]) -> Vec<f32> {
        let stemmer = stemmer();
        let mut scores = vec![0.0f32; self.tools];
        let mut best = vec![0.0f32; self.tools];
        let mut touched = Vec::new();
        for word in query {
            // The terms this word reaches: its own stem, fully, and every word it begins, less.
            let mut reached: HashMap<u32, f32> = HashMap::default();
            if let Some(&term) = self.terms.get(stemmer.stem(word).as_ref()) {
                reached.insert(term, 1.0);
            }
            let start = self
                .words
                .partition_point(|(known, _)| known.as_str() < word.as_str());
            for (known, term) in &self.words[start..] {
                if !known.starts_with(word.as_str()) {
                    break;
                }
                let weight = if known == word { 1.0 } else { PREFIX_MATCH };
                let entry = reached.entry(*term).or_insert(weight);
                *entry = entry.max(weight);
            }
            // And every word of at least three letters that begins it, less: the abbreviations
            // names are written in (`repo` for `repository`, `org` for `organization`).
            for (end, _) in word.char_indices().skip(MIN_ABBREVIATION) {
                let prefix = &word[..end];
                if let Ok(at) = self
                    .words
                    .binary_search_by(|(known, _)| known.as_str().cmp(prefix))
                {
                    let entry = reached.entry(self.words[at].1).or_insert(PREFIX_MATCH);
                    *entry = entry.max(PREFIX_MATCH);
                }
            }
            let common = if is_common(word) { COMMON_WORD } else { 1.0 };
            for (term, weight) in reached {
                let postings = &self.postings[term as usize];
                let idf = (1.0
                    + (self.tools as f32 - postings.len() as f32 + 0.5)
                        / (postings.len() as f32 + 0.5))
                    .ln();
                for posting in postings {
                    let tool = posting.tool as usize;
                    let mut frequency = 0.0;
                    // A word the query word only begins counts in names, not in prose, where
                    // short words begin too many words.
                    let fields: &[Field] = if weight < 1.0 {
                        &[Field::Name, Field::Source]
                    } else {
                        &[
                            Field::Name,
                            Field::Source,
                            Field::Description,
                            Field::Parameters,
                        ]
                    };
                    for &field in fields {
                        let field = field as usize;
                        let count = f32::from(posting.frequency[field]);
                        if count > 0.0 {
                            let length = f32::from(self.lengths[tool][field]);
                            let b = LENGTH_NORMALISATION[field];
                            let norm = 1.0 - b + b * length / self.average_length[field];
                            frequency += WEIGHT[field] * count / norm;
                        }
                    }
                    let score = common * weight * idf * frequency * (K1 + 1.0) / (frequency + K1);
                    if best[tool] == 0.0 {
                        touched.push(tool);
                    }
                    best[tool] = best[tool].max(score);
                }
            }
            // One query word counts once per tool: by the best term it reached there.
            for tool in touched.drain(..) {
                scores[tool] += best[tool];
                best[tool] = 0.0;
            }
        }
        scores
    }

    fn plain_scores(&self, query: &[String]) -> Vec<f32> {
        self.plain
            .iter()
            .map(|tool| {
                let mut score = 0.0;
                for word in query {
                    let hits = |words: &[String]| {
                        words
                            .iter()
                            .filter(|w| w.starts_with(word.as_str()))
                            .count() as f32
                    };
                    score += 3.0 * hits(&tool.name) + hits(&tool.description);
                }
                score
            })
            .collect()
    }
}
