"""User interfaces: the Gradio app and text rendering for the terminal."""
