//! The meaning half of a hybrid [`SearchIndex`](super::SearchIndex): the model that reads
//! meaning ([`MeaningModel`]), each tool's vector, the query's at search time, and their fusion
//! with the ranking on words.

use std::sync::Arc;

use super::embedder::{Embedder, EmbedderError, scale_to_unit};
use super::static_embedder::StaticEmbedder;
use super::words::name_words;
use toolkit_core::ToolDefinition;

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
/// # use toolkit_runtime::{search::Embedder, search::MeaningModel, search::StaticEmbedder};
/// let model: MeaningModel = Arc::new(StaticEmbedder::load("minilm-static.safetensors")?).into();
/// # Ok::<(), toolkit_runtime::search::EmbedderError>(())
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
    /// Loads the model at `path`: a sentence model's directory ([`Embedder::load`]) or a file of
    /// static vectors ([`StaticEmbedder::load`]).
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Self, EmbedderError> {
        let path = path.as_ref();
        if path.is_file() {
            StaticEmbedder::load(path).map(Self::from)
        } else if path.is_dir() {
            Embedder::load(path).map(Self::from)
        } else {
            Err(EmbedderError::new(
                "no such file or directory (a sentence model's directory, or a file of static \
                 vectors from `toolkit-gen distill`)",
            ))
        }
    }

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
        let names: Vec<String> = definitions
            .iter()
            .map(|definition| name_words(definition.name()).join(" "))
            .collect();
        let texts: Vec<String> = definitions
            .iter()
            .zip(&names)
            .map(|(definition, name)| meaning_text(name, definition))
            .collect();
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
                let weight = |id| rarity_of(&rarity, id);
                let mut vectors = Vec::with_capacity(texts.len() * embedder.dimensions());
                for (name, tokens) in names.iter().zip(&tokens) {
                    let name = embedder.embed_weighted(&embedder.token_ids(name), weight);
                    let text = embedder.embed_weighted(tokens, weight);
                    let mut vector: Vec<f32> = name
                        .iter()
                        .zip(&text)
                        .map(|(name, text)| NAME_WEIGHT * name + text)
                        .collect();
                    scale_to_unit(&mut vector);
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

    /// Each tool's cosine similarity to `query` (the vectors have length one); `None` when the
    /// query has no meaning to compare (static vectors of common words only, which weigh
    /// nothing): every similarity would be 0, and rank the tools in their order.
    pub(crate) fn similarities(&self, query: &str) -> Result<Option<Vec<f32>>, EmbedderError> {
        let query = match &self.model {
            MeaningModel::Transformer(embedder) => embedder.embed(query)?,
            MeaningModel::Static(embedder) => embedder
                .embed_weighted(&embedder.token_ids(query), |id| rarity_of(&self.rarity, id)),
        };
        if query.iter().all(|&x| x == 0.0) {
            return Ok(None);
        }
        Ok(Some(
            self.vectors
                .chunks_exact(query.len().max(1))
                .map(|tool| dot(tool, &query))
                .collect(),
        ))
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

/// What token `id` is scaled by, by [`rarity`]'s table (0 for an id past it).
fn rarity_of(rarity: &[f32], id: u32) -> f32 {
    rarity.get(id as usize).copied().unwrap_or(0.0)
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

/// What the model reads of a tool: the words of its name (`name`), then its description.
fn meaning_text(name: &str, definition: &ToolDefinition) -> String {
    match definition.description.as_deref() {
        Some(description) if !description.is_empty() => format!("{name}: {description}"),
        _ => name.to_owned(),
    }
}

/// The fused score of each tool by reciprocal rank fusion of its rank on words (if it has a
/// word of the query) and its rank by meaning; zero for a tool that neither shares a word with
/// the query nor comes near it in meaning, so it does not match.
///
/// The scores of the best `limit` tools are exact, and so is which tools they are; a tool past
/// them may score a little less than its exact score (never zero where it matches). Ranking
/// every tool both ways sorts all of them (most of a search's time at 10,000 tools), so each
/// list sorts only its first [`HEAD`] beyond `limit`: a tool past a head scores as if last in
/// that list, unless even with the best rank past it it could reach the `limit` best, in which
/// case its rank is found exactly.
pub(crate) fn fuse(
    words: &[f32],
    similarities: &[f32],
    meaning_weight: f32,
    limit: usize,
) -> Vec<f32> {
    let tools = words.len().min(similarities.len());
    let head = HEAD.saturating_add(limit);
    // Only a tool with words gets a word rank; ranking the rest would not move it.
    let has_words = |score: f32| score > 0.0;
    let mut word_ranks = head_ranks(words, head, has_words);
    let mut meaning_ranks = head_ranks(similarities, head, |_| true);
    let matches = |tool: usize| words[tool] > 0.0 || similarities[tool] >= MIN_SIMILARITY;
    // A tool's score with its ranks, an unknown rank read as `unknown`.
    let score = |tool: usize, word_ranks: &[usize], meaning_ranks: &[usize], unknown: usize| {
        if !matches(tool) {
            return 0.0;
        }
        let rank = |rank: usize| if rank == usize::MAX { unknown } else { rank };
        let by_words = if words[tool] > 0.0 {
            1.0 / (RANK_OFFSET + rank(word_ranks[tool]) as f32)
        } else {
            0.0
        };
        by_words + meaning_weight / (RANK_OFFSET + rank(meaning_ranks[tool]) as f32)
    };
    let mut fused: Vec<f32> = (0..tools)
        .map(|tool| score(tool, &word_ranks, &meaning_ranks, tools))
        .collect();
    let unknown = |tool: usize| {
        (words[tool] > 0.0 && word_ranks[tool] == usize::MAX) || meaning_ranks[tool] == usize::MAX
    };
    if !(0..tools).any(unknown) {
        return fused;
    }
    // The `limit`-th best score so far: the exact scores are at least these.
    let mut best = fused.clone();
    let at = limit.clamp(1, best.len()) - 1;
    best.select_nth_unstable_by(at, |a, b| b.total_cmp(a));
    let threshold = best[at];
    let near: Vec<usize> = (0..tools)
        .filter(|&tool| {
            unknown(tool)
                && matches(tool)
                && score(tool, &word_ranks, &meaning_ranks, head) >= threshold
        })
        .collect();
    for (list, ranks, filter) in [
        (words, &mut word_ranks, has_words as fn(f32) -> bool),
        (similarities, &mut meaning_ranks, |_| true),
    ] {
        let unranked: Vec<usize> = near
            .iter()
            .copied()
            .filter(|&tool| filter(list[tool]) && ranks[tool] == usize::MAX)
            .collect();
        for (tool, rank) in unranked.iter().zip(exact_ranks(list, &unranked)) {
            ranks[*tool] = rank;
        }
    }
    for tool in near {
        fused[tool] = score(tool, &word_ranks, &meaning_ranks, tools);
    }
    fused
}

/// How many tools beyond a search's limit each list sorts (see [`fuse`]).
const HEAD: usize = 100;

/// The exact ranks by `scores` (best first from 0, ties in the tools' order) of `tools`, in
/// their order: `tools` sorted, then each tool of all placed among them by a binary search, so
/// that a tool's rank is how many were placed before it (`n log m` for `m` tools of `n`).
fn exact_ranks(scores: &[f32], tools: &[usize]) -> Vec<usize> {
    // Best first: the higher score, then the lower index.
    let order = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
    let mut sorted: Vec<usize> = tools.to_vec();
    sorted.sort_unstable_by(order);
    // before[k]: how many tools are better than sorted[k] but not than sorted[k - 1].
    let mut before = vec![0usize; sorted.len() + 1];
    for other in 0..scores.len() {
        let at = sorted.partition_point(|tool| order(&other, tool).is_ge());
        before[at] += 1;
    }
    let mut rank_of = vec![0usize; scores.len()];
    let mut count = 0;
    for (k, &tool) in sorted.iter().enumerate() {
        count += before[k];
        rank_of[tool] = count;
    }
    tools.iter().map(|&tool| rank_of[tool]).collect()
}

/// The ranks of the `head` best tools by `scores` among those `ranked` picks (best first from 0,
/// ties in the tools' order); `usize::MAX` for the rest. Sorts (score, tool) pairs, which lie
/// together in memory (sorting indices that look their scores up was twice as slow).
fn head_ranks(scores: &[f32], head: usize, ranked: impl Fn(f32) -> bool) -> Vec<usize> {
    let by_score = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    let mut order: Vec<(f32, u32)> = (0u32..)
        .zip(scores)
        .filter(|&(_, &score)| ranked(score))
        .map(|(tool, &score)| (score, tool))
        .collect();
    if head < order.len() {
        order.select_nth_unstable_by(head, by_score);
        order.truncate(head);
    }
    order.sort_unstable_by(by_score);
    let mut ranks = vec![usize::MAX; scores.len()];
    for (rank, (_, tool)) in order.into_iter().enumerate() {
        ranks[tool as usize] = rank;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fusion with every tool ranked by meaning: what [`fuse`] must agree with.
    fn fuse_exactly(words: &[f32], similarities: &[f32], weight: f32) -> Vec<f32> {
        let word_ranks = head_ranks(words, usize::MAX, |score| score > 0.0);
        let meaning_ranks = head_ranks(similarities, usize::MAX, |_| true);
        (0..words.len())
            .map(|tool| {
                if words[tool] <= 0.0 && similarities[tool] < MIN_SIMILARITY {
                    return 0.0;
                }
                let by_words = match word_ranks[tool] {
                    usize::MAX => 0.0,
                    rank => 1.0 / (RANK_OFFSET + rank as f32),
                };
                by_words + weight / (RANK_OFFSET + meaning_ranks[tool] as f32)
            })
            .collect()
    }

    /// The best `limit` tools by `scores`, with their scores (ties in the tools' order).
    fn best(scores: &[f32], limit: usize) -> Vec<(usize, f32)> {
        let mut order: Vec<(usize, f32)> = scores
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, score)| *score > 0.0)
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        order.truncate(limit);
        order
    }

    #[test]
    fn the_best_tools_and_their_scores_are_those_of_the_exact_fusion() {
        // A small generator: the same numbers every run.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for (tools, share_with_words) in [(3_000, 0.01), (3_000, 0.3), (500, 0.9), (150, 0.5)] {
            let words: Vec<f32> = (0..tools)
                .map(|_| {
                    if next() < share_with_words {
                        1.0 + 9.0 * next()
                    } else {
                        0.0
                    }
                })
                .collect();
            // Coarse similarities, so that ties happen.
            let similarities: Vec<f32> = (0..tools)
                .map(|_| (next() * 50.0).round() / 50.0 - 0.2)
                .collect();
            let exact = fuse_exactly(&words, &similarities, 1.5);
            for limit in [1, 5, 20, 200] {
                let fused = fuse(&words, &similarities, 1.5, limit);
                assert_eq!(
                    best(&fused, limit),
                    best(&exact, limit),
                    "{tools} tools, limit {limit}"
                );
                // Every tool that matches still matches.
                let matching = |scores: &[f32]| scores.iter().filter(|s| **s > 0.0).count();
                assert_eq!(matching(&fused), matching(&exact));
            }
        }
        // A tool near the top on words and last by meaning, beside one a little lower on words
        // and just past the sorted head by meaning: the exact ranks decide between them.
        let tools = 1_000;
        let mut words = vec![0.0f32; tools];
        let mut similarities: Vec<f32> =
            (0..tools).map(|tool| 1.0 - tool as f32 / 2_000.0).collect();
        for rank in 0..21 {
            words[rank + 500] = 100.0 - rank as f32;
        }
        similarities[519] = -1.0;
        let exact = fuse_exactly(&words, &similarities, 2.0);
        assert_eq!(
            best(&fuse(&words, &similarities, 2.0, 20), 20),
            best(&exact, 20)
        );
    }

    #[test]
    fn a_tool_matches_by_words_or_by_meaning_and_both_count() {
        let words = [4.0, 0.0, 0.0, 2.0];
        let similarities = [0.1, 0.6, MIN_SIMILARITY - 0.01, 0.6];
        let fused = fuse(&words, &similarities, 2.0, 20);
        // Far in meaning and no word: no match.
        assert_eq!(fused[2], 0.0);
        // Near in meaning without a word of the query: a match.
        assert!(fused[1] > 0.0);
        // Words alone match however far the meaning.
        assert!(fused[0] > 0.0);
        // Words and meaning beat meaning alone.
        assert!(fused[3] > fused[1]);
        // Ranks: best first, ties in the tools' order, the tools not ranked last.
        let scores = [1.0, 3.0, 3.0, 0.0];
        assert_eq!(head_ranks(&scores, 9, |s| s > 0.0), [2, 0, 1, usize::MAX]);
        assert_eq!(
            head_ranks(&scores, 2, |_| true),
            [usize::MAX, 0, 1, usize::MAX]
        );
        assert_eq!(exact_ranks(&scores, &[3, 0]), [3, 2]);
        // A query that matches no word ranks by meaning.
        let fused = fuse(&[0.0, 0.0], &[0.3, 0.5], 2.0, 20);
        assert!(fused[1] > fused[0] && fused[0] > 0.0);
    }
}
