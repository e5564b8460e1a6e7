mod provider_search;
mod web_search;
