//! A GET from the test's side, for the fixture server's JSON endpoints.

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// `GET base + path_and_query`, its body parsed as JSON.
pub async fn get_json(base: &str, path_and_query: &str) -> Result<Value, String> {
    let url = format!("{base}{path_and_query}");
    let client = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build(HttpConnector::new());
    let uri: hyper::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let request = hyper::Request::get(uri)
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("{url}: {e}"))?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{url}: the body: {e}"))?
        .to_bytes();
    serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
}
