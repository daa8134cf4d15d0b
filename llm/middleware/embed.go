package middleware

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"
)

// EmbedFunc creates one embedding vector per text: the signature of
// langchaingo's embeddings.EmbedderClient.CreateEmbedding.
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// errNoVectors means an embedding call passed through the stack returned
// no vectors where it should have; it marks a bug of this file, not a
// provider failure.
var errNoVectors = errors.New("middleware: the embedding call returned no vectors")

// embeddingsKey is the GenerationInfo key that carries an embedding
// call's vectors through the model middlewares.
const embeddingsKey = "middleware.embeddings"

// ApplyEmbed wraps embed in the retry, rate-limit and per-attempt timeout
// middlewares of cfg (the reply limit does not apply: vectors have no text
// to cut). Each call of the returned function is one call through that
// stack: transient failures (classified as for model calls, see Classify)
// are retried with cfg's backoff and reported to the WithOnRetry hook, an
// attempt longer than cfg.Timeout fails with ErrCallTimeout, and the rate
// limit, which is not shared with any model's, bounds the calls. Attempts
// are counted in ctx's AttemptCounter, if any.
func ApplyEmbed(embed EmbedFunc, cfg Config, opts ...Option) EmbedFunc {
	cfg.MaxReplyBytes = 0
	m := Chain(embedModel{embed: embed}, cfg.Middlewares(opts...)...)
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		parts := make([]llms.ContentPart, len(texts))
		for i, t := range texts {
			parts[i] = llms.TextContent{Text: t}
		}
		resp, err := m.GenerateContent(ctx, []llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: parts}})
		if err != nil {
			return nil, err
		}
		if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
			return nil, errNoVectors
		}
		vecs, ok := resp.Choices[0].GenerationInfo[embeddingsKey].([][]float32)
		if !ok {
			return nil, errNoVectors
		}
		return vecs, nil
	}
}

// embedModel presents an EmbedFunc as a model, so that the model
// middlewares can wrap it: the texts travel as the parts of the first
// message and the vectors come back in the first choice's GenerationInfo.
type embedModel struct{ embed EmbedFunc }

// GenerateContent implements llms.Model.
func (e embedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	var texts []string
	if len(msgs) > 0 {
		for _, p := range msgs[0].Parts {
			t, ok := p.(llms.TextContent)
			if !ok {
				return nil, fmt.Errorf("middleware: an embedding call carries a %T part; want text", p)
			}
			texts = append(texts, t.Text)
		}
	}
	vecs, err := e.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{GenerationInfo: map[string]any{embeddingsKey: vecs}}}}, nil
}

// Call implements llms.Model; an embedding model has no text to return.
func (e embedModel) Call(context.Context, string, ...llms.CallOption) (string, error) {
	return "", errors.New("middleware: an embedding model has no text completion")
}
