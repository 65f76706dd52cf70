//! The Swagger Petstore, served in process on 127.0.0.1 (axum): a few pets in memory.

use std::sync::{Arc, Mutex, PoisonError};

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::{Value, json};

type Pets = Arc<Mutex<Vec<Value>>>;

/// Serves the Petstore at `http://<address>/v1` until the program ends; gives the base URL.
pub async fn serve() -> std::io::Result<String> {
    let pets: Pets = Arc::new(Mutex::new(vec![
        json!({ "id": 1, "name": "Rex", "tag": "dog" }),
        json!({ "id": 2, "name": "Tom", "tag": "cat" }),
        json!({ "id": 3, "name": "Nemo", "tag": "fish" }),
    ]));
    let app = Router::new()
        .route("/v1/pets", get(list).post(create))
        .route("/v1/pets/{id}", get(show))
        .with_state(pets);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(toolkit_runtime::serve::without_delay(listener), app).await;
    });
    Ok(format!("http://{address}/v1"))
}

async fn list(
    State(pets): State<Pets>,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> Json<Value> {
    let limit = query
        .get("limit")
        .and_then(|limit| limit.parse().ok())
        .unwrap_or(100);
    let pets = pets.lock().unwrap_or_else(PoisonError::into_inner);
    Json(Value::Array(pets.iter().take(limit).cloned().collect()))
}

async fn create(State(pets): State<Pets>, Json(pet): Json<Value>) -> StatusCode {
    pets.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(pet);
    StatusCode::CREATED
}

async fn show(State(pets): State<Pets>, Path(id): Path<String>) -> (StatusCode, Json<Value>) {
    let pets = pets.lock().unwrap_or_else(PoisonError::into_inner);
    match pets
        .iter()
        .find(|pet| pet["id"].as_i64().is_some_and(|n| n.to_string() == id))
    {
        Some(pet) => (StatusCode::OK, Json(pet.clone())),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({ "code": 404, "message": format!("no pet {id}") })),
        ),
    }
}
