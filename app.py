"""The Gradio demo of AgentDebuggerEnv (the Hugging Face Space's ``app_file``).

    python app.py                               # http://localhost:7860, the environment in this process
    python app.py --url http://localhost:8000   # against a running server
"""

from env.demo.launch import main

if __name__ == "__main__":
    main()
