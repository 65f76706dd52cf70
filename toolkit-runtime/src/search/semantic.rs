//! The meaning half of a hybrid [`SearchIndex`](super::SearchIndex): the model that reads
//! meaning ([`MeaningModel`]), each tool's vector, the query's at search time, and their fusion
//! with the ranking on words.

use std::sync::Arc;

use super::embedder::{Embedder, EmbedderError};
use super::static_embedder::StaticEmbedder;
use super::words::name_words;
use crate::ToolDefinition;

/// Reciprocal rank fusion: a tool scores `1 / (RANK_OFFSET + rank)` for its rank on words and
/// `weight / (RANK_OFFSET + rank)` for its rank by meaning (ranks from 0), the weight the
/// model's ([`MeaningModel::weight`]). Tuned on MetaTool's development half
/// (`examples/search_eval.rs`): of offsets 2, 5, 10, 20 and 60, 5 ranked best with either model.
const RANK_OFFSET: f32 = 5.0;
/// The least cosine similarity at which a tool that shares no word with the query still matches
/// it (0.05 to 0.35 moved recall@5 on the development half by at most 0.003).
pub(crate) const MIN_SIMILARITY: f32 = 0.2;
/// What a tool's name weighs in its static vector against its whole text (the name's words and
/// its description): of 0, 0.3 and 0.7, 0.3 ranked best.
const NAME_WEIGHT: f32 = 0.3;

/// The fewest tools a token counts as held by in [`rarity`]: a query's word that no tool holds
/// would otherwise weigh most, and pull the query's vector toward itself alone (of floors 0, 1,
/// 2, 3 and 5, 2 ranked best on MetaTool's development half, +0.005 recall@5 over none).
const FEWEST_HOLDING: u32 = 2;

/// The model a hybrid index reads meaning with: a transformer (the better ranking, about 20 ms a
/// query on a CPU) or static vectors distilled from one (a little less good, microseconds).
///
/// ```no_run
/// # use std::sync::Arc;
/// # use toolkit_runtime::{Embedder, MeaningModel, StaticEmbedder};
/// let model: MeaningModel = Arc::new(StaticEmbedder::load("minilm-static.safetensors")?).into();
/// # Ok::<(), toolkit_runtime::EmbedderError>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum MeaningModel {
    /// A sentence-embedding transformer, run on each query.
    Transformer(Arc<Embedder>),
    /// Static token vectors, looked up for each query.
    Static(Arc<StaticEmbedder>),
}

impl MeaningModel {
    /// What a tool's rank by meaning counts against its rank on words in the fusion: 2 for a
    /// transformer, 1.5 for static vectors (of 0.5 to 2, the best for each on MetaTool's
    /// development half).
    pub fn weight(&self) -> f32 {
        match self {
            Self::Transformer(_) => 2.0,
            Self::Static(_) => 1.5,
        }
    }
}

impl From<Arc<Embedder>> for MeaningModel {
    fn from(model: Arc<Embedder>) -> Self {
        Self::Transformer(model)
    }
}

impl From<Arc<StaticEmbedder>> for MeaningModel {
    fn from(model: Arc<StaticEmbedder>) -> Self {
        Self::Static(model)
    }
}

impl From<Embedder> for MeaningModel {
    fn from(model: Embedder) -> Self {
        Self::Transformer(Arc::new(model))
    }
}

impl From<StaticEmbedder> for MeaningModel {
    fn from(model: StaticEmbedder) -> Self {
        Self::Static(Arc::new(model))
    }
}

/// Every tool's vector, one after another, and the model that made them.
#[derive(Clone)]
pub(crate) struct Semantic {
    model: MeaningModel,
    vectors: Vec<f32>,
    /// With static vectors, each token's inverse document frequency over the tools (by id):
    /// what the tokens of a query and of a tool are scaled by.
    rarity: Vec<f32>,
}

impl std::fmt::Debug for Semantic {
    /// The model and how many floats, not the floats (a few million at 10,000 tools).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semantic")
            .field("model", &self.model)
            .field("floats", &self.vectors.len())
            .finish()
    }
}

impl Semantic {
    /// The vectors of these tools.
    pub(crate) fn new(
        model: MeaningModel,
        definitions: &[&ToolDefinition],
    ) -> Result<Self, EmbedderError> {
        let texts: Vec<String> = definitions.iter().map(|d| meaning_text(d)).collect();
        match &model {
            MeaningModel::Transformer(embedder) => {
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                let vectors = embedder.embed_many(&texts)?.concat();
                Ok(Self {
                    model,
                    vectors,
                    rarity: Vec::new(),
                })
            }
            MeaningModel::Static(embedder) => {
                let tokens: Vec<Vec<u32>> = texts.iter().map(|t| embedder.token_ids(t)).collect();
                let rarity = rarity(&tokens, embedder.tokens());
                let weight = |id: u32| rarity.get(id as usize).copied().unwrap_or(0.0);
                let mut vectors = Vec::with_capacity(texts.len() * embedder.dimensions());
                for (definition, tokens) in definitions.iter().zip(&tokens) {
                    let name = name_words(definition.name()).join(" ");
                    let name = embedder.embed_weighted(&embedder.token_ids(&name), weight);
                    let text = embedder.embed_weighted(tokens, weight);
                    let mut vector: Vec<f32> = name
                        .iter()
                        .zip(&text)
                        .map(|(name, text)| NAME_WEIGHT * name + text)
                        .collect();
                    let length = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                    if length > 0.0 {
                        vector.iter_mut().for_each(|x| *x /= length);
                    }
                    vectors.extend(vector);
                }
                Ok(Self {
                    model,
                    vectors,
                    rarity,
                })
            }
        }
    }

    /// What the rank by meaning weighs in the fusion.
    pub(crate) fn weight(&self) -> f32 {
        self.model.weight()
    }

    /// Each tool's cosine similarity to `query` (the vectors have length one).
    pub(crate) fn similarities(&self, query: &str) -> Result<Vec<f32>, EmbedderError> {
        let query = match &self.model {
            MeaningModel::Transformer(embedder) => embedder.embed(query)?,
            MeaningModel::Static(embedder) => {
                let rarity = |id: u32| self.rarity.get(id as usize).copied().unwrap_or(0.0);
                embedder.embed_weighted(&embedder.token_ids(query), rarity)
            }
        };
        Ok(self
            .vectors
            .chunks_exact(query.len().max(1))
            .map(|tool| dot(tool, &query))
            .collect())
    }
}

/// Each token's inverse document frequency over these tools' tokens, `ln((n + 1) / (df + 0.5))`,
/// at least 0.05; a token that fewer than [`FEWEST_HOLDING`] tools hold weighs as one that many
/// hold.
fn rarity(tools: &[Vec<u32>], vocabulary: usize) -> Vec<f32> {
    let mut frequency = vec![0u32; vocabulary];
    let mut seen = Vec::new();
    for tokens in tools {
        seen.clear();
        seen.extend_from_slice(tokens);
        seen.sort_unstable();
        seen.dedup();
        for &id in &seen {
            if let Some(count) = frequency.get_mut(id as usize) {
                *count += 1;
            }
        }
    }
    let tools = tools.len() as f32;
    frequency
        .into_iter()
        .map(|count| {
            let count = count.max(FEWEST_HOLDING) as f32;
            ((tools + 1.0) / (count + 0.5)).ln().max(0.05)
        })
        .collect()
}

/// The dot product of two vectors, summed in eight lanes so that it vectorises (a single running
/// sum of floats cannot be reordered, so it would not).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// What the model reads of a tool: the words of its name, then its description.
fn meaning_text(definition: &ToolDefinition) -> String {
    let name = name_words(definition.name()).join(" ");
    match definition.description.as_deref() {
        Some(description) if !description.is_empty() => format!("{name}: {description}"),
        _ => name,
    }
}

/// The fused score of each tool by reciprocal rank fusion of its rank on words (if it has a
/// word of the query) and its rank by meaning; zero for a tool that neither shares a word with
/// the query nor comes near it in meaning, so it does not match.
pub(crate) fn fuse(words: &[f32], similarities: &[f32], meaning_weight: f32) -> Vec<f32> {
    let word_ranks = ranks(words);
    let meaning_ranks = ranks(similarities);
    words
        .iter()
        .zip(similarities)
        .enumerate()
        .map(|(tool, (&words, &similarity))| {
            if words <= 0.0 && similarity < MIN_SIMILARITY {
                return 0.0;
            }
            let by_words = if words > 0.0 {
                1.0 / (RANK_OFFSET + word_ranks[tool] as f32)
            } else {
                0.0
            };
            by_words + meaning_weight / (RANK_OFFSET + meaning_ranks[tool] as f32)
        })
        .collect()
}

/// How many of the best tools by each score get their own rank; the rest share the rank after.
/// A tool past it in both lists scores at most `(1 + 2) / (5 + 200)`, less than any tool in the
/// first 20 of either list (at least `1 / (5 + 20)`), so no search's answer (at most 20 tools)
/// changes; and sorting 200 instead of 10,000 tools is most of a search's time at that size.
const RANKED: usize = 200;

/// Each tool's rank by `scores`, best first from 0 (ties in the tools' order); the tools past
/// the first [`RANKED`] all take rank [`RANKED`].
fn ranks(scores: &[f32]) -> Vec<usize> {
    let by_score = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
    let mut order: Vec<usize> = (0..scores.len()).collect();
    let head = RANKED.min(order.len());
    if head < order.len() {
        order.select_nth_unstable_by(head, by_score);
    }
    order[..head].sort_unstable_by(by_score);
    let mut ranks = vec![head; scores.len()];
    for (rank, &tool) in order[..head].iter().enumerate() {
        ranks[tool] = rank;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_matches_by_words_or_by_meaning_and_both_count() {
        let words = [4.0, 0.0, 0.0, 2.0];
        let similarities = [0.1, 0.6, MIN_SIMILARITY - 0.01, 0.6];
        let fused = fuse(&words, &similarities, 2.0);
        // Far in meaning and no word: no match.
        assert_eq!(fused[2], 0.0);
        // Near in meaning without a word of the query: a match.
        assert!(fused[1] > 0.0);
        // Words alone match however far the meaning.
        assert!(fused[0] > 0.0);
        // Words and meaning beat meaning alone.
        assert!(fused[3] > fused[1]);
        // Past the ranked head, tools share one rank, after every ranked one.
        let scores: Vec<f32> = (0..RANKED + 50).map(|i| i as f32).collect();
        let ranked = ranks(&scores);
        assert_eq!(ranked[RANKED + 49], 0);
        assert_eq!(ranked[50], RANKED - 1);
        assert!(ranked[..50].iter().all(|&rank| rank == RANKED));
        // A query that matches no word ranks by meaning.
        let fused = fuse(&[0.0, 0.0], &[0.3, 0.5], 2.0);
        assert!(fused[1] > fused[0] && fused[0] > 0.0);
    }
}
