package server

// PipelineStats says, for tests, how many pipelines the server keeps
// loaded (in use or idle) and how many it loaded in all.
func (s *Server) PipelineStats() (cached int, loads int64) { return s.pipes.stats() }
