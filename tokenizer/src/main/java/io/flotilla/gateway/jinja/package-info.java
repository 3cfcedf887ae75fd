/**
 * Python compatibility for HuggingFace chat templates: a Jinjava environment configured like
 * transformers' Jinja environment ({@link io.flotilla.gateway.jinja.HfJinjaEnvironment}) with Python
 * {@code str} methods, {@code json.dumps} and {@code strftime} as templates expect them. Knows
 * nothing of tokenizers or HTTP; {@code tokenize.JinjaChatTemplate} renders conversations with it.
 */
package io.flotilla.gateway.jinja;
