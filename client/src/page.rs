//! Paged lists with `next` and `previous` navigation.

use reqwest::Method;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::{Client, Error};

/// The list envelope on the wire: `{"page":{"total","offset","limit"},"data":[…]}`.
#[derive(Deserialize)]
pub(crate) struct PageEnvelope<T> {
    pub(crate) page: PageInfo,
    pub(crate) data: Vec<T>,
}

#[derive(Deserialize)]
pub(crate) struct PageInfo {
    #[serde(default)]
    total: Option<u64>,
    offset: u64,
    limit: u64,
}

/// One page of a list, newest first, that can fetch the pages beside it.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// How many items the whole list has.
    pub total: u64,
    /// The position of this page's first item in the list.
    pub offset: u64,
    /// The page size.
    pub limit: u64,
    client: Client,
    query: String,
}

impl<T: DeserializeOwned> Page<T> {
    /// The first page of `query` (a path with RQL, without `limit`).
    pub(crate) async fn first(
        client: Client,
        query: String,
        limit: Option<u32>,
    ) -> Result<Self, Error> {
        let path = match limit {
            Some(limit) => format!("{query}&limit({limit})"),
            None => query.clone(),
        };
        Page::fetch(client, query, path).await
    }

    async fn fetch(client: Client, query: String, path: String) -> Result<Self, Error> {
        let envelope: PageEnvelope<T> = client.json(Method::GET, &path, None::<&()>).await?;
        let PageInfo {
            total,
            offset,
            limit,
        } = envelope.page;
        Ok(Page {
            total: total.unwrap_or(offset + envelope.data.len() as u64),
            items: envelope.data,
            offset,
            limit,
            client,
            query,
        })
    }

    /// Whether a later page exists.
    pub fn has_next(&self) -> bool {
        self.offset + self.limit < self.total
    }

    /// Whether an earlier page exists.
    pub fn has_previous(&self) -> bool {
        self.offset > 0
    }

    /// The next page, or `None` on the last one.
    pub async fn next(&self) -> Result<Option<Self>, Error> {
        if !self.has_next() {
            return Ok(None);
        }
        self.at(self.offset + self.limit).await.map(Some)
    }

    /// The previous page, or `None` on the first one.
    pub async fn previous(&self) -> Result<Option<Self>, Error> {
        if !self.has_previous() {
            return Ok(None);
        }
        self.at(self.offset.saturating_sub(self.limit))
            .await
            .map(Some)
    }

    async fn at(&self, offset: u64) -> Result<Self, Error> {
        let path = format!("{}&limit({},{offset})", self.query, self.limit);
        Page::fetch(self.client.clone(), self.query.clone(), path).await
    }
}
