"""The hand-written fields and codebooks of the sample archive, as data.

Each field has a name, a definition and ``terms`` (extra vocabulary used only by
the instrument when it scores membership). Each of its eight directions has the
codebook text that is published (``name``, ``definition``, ``include``,
``exclude``) and ``terms``, the instrument's extra vocabulary for that
direction. Exemplars are not written here: the build picks them with the
instrument (the top-scoring pre-2023 papers of each direction).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DirectionText:
    name: str
    definition: str
    include: str
    exclude: str
    terms: str


@dataclass(frozen=True)
class FieldText:
    field_id: str
    name: str
    definition: str
    terms: str
    directions: tuple[DirectionText, ...]
    # Share of calibration papers (first submitted before the first origin) that
    # the instrument admits as members: 0.10 for broad fields, less for narrow ones.
    breadth: float = 0.10


def _d(name: str, definition: str, include: str, exclude: str, terms: str) -> DirectionText:
    return DirectionText(name, definition, include, exclude, terms)


FIELDS: tuple[FieldText, ...] = (
    FieldText(
        "machine-translation",
        "Machine translation",
        "Automatic translation of text or speech from one natural language into another. The field covers how "
        "translation systems are modelled, trained, adapted and evaluated, from neural encoder-decoder systems to "
        "translation with general-purpose large language models.",
        "machine translation translation mt nmt neural machine translation source target language pair bleu "
        "translate translated parallel corpus wmt bilingual",
        (
            _d(
                "Neural MT architectures and training",
                "Work on the model and training recipe of neural machine translation systems. It studies encoder-decoder "
                "Transformers, non-autoregressive decoding, and training objectives for translation.",
                "New NMT architectures, non-autoregressive or iterative translation, back-translation and data "
                "augmentation recipes, curriculum and regularisation for translation training.",
                "Papers whose contribution is an evaluation metric (D2) or translation with prompted LLMs (D6).",
                "encoder decoder transformer non-autoregressive nat back-translation knowledge distillation "
                "training objective beam search decoding vocabulary subword bpe architecture",
            ),
            _d(
                "Low-resource and multilingual MT",
                "Translation for language pairs with little parallel data, and single systems serving many language pairs. "
                "It includes zero-shot translation between pairs never seen together in training.",
                "Massively multilingual NMT, pivoting and zero-shot directions, unsupervised MT from monolingual "
                "corpora, parallel-data mining and MT systems for specific under-resourced languages.",
                "General cross-lingual representation learning without a translation output (multilingual NLP field).",
                "low-resource low resource language multilingual nmt zero-shot translation unsupervised machine "
                "translation monolingual data african indic languages parallel data mining many-to-many",
            ),
            _d(
                "MT evaluation and quality estimation",
                "Measuring translation quality, with or without references. It covers automatic metrics, human "
                "evaluation protocols and predicting quality of a translation without a reference.",
                "Metrics such as BLEU, chrF, COMET or BLEURT and their meta-evaluation, MQM and direct-assessment "
                "studies, reference-free quality estimation and error span detection.",
                "Evaluation of summarisation or general generation (summarisation field); new MT systems that merely "
                "report BLEU.",
                "evaluation metric quality estimation qe comet bleurt chrf mqm human evaluation reference-free "
                "correlation human judgment error annotation metric meta-evaluation",
            ),
            _d(
                "Document-level and context-aware MT",
                "Translation that uses context beyond the current sentence. It targets discourse phenomena such as "
                "pronouns, lexical cohesion and consistency across a document.",
                "Document-level NMT, context-aware models, discourse test suites, translation of long documents, "
                "literary translation with cross-sentence context.",
                "Sentence-level systems without any use of context (D0).",
                "document-level context-aware discourse coherence cohesion anaphora pronoun consistency "
                "inter-sentential context long document literary translation",
            ),
            _d(
                "Speech and simultaneous translation",
                "Translation of spoken input, and translation that must start before the source sentence is finished. "
                "It includes cascaded and end-to-end speech-to-text and speech-to-speech translation.",
                "End-to-end speech translation, simultaneous policies such as wait-k, latency-quality trade-offs, "
                "speech-to-speech translation and streaming translation.",
                "Speech recognition with no translation step (speech field).",
                "speech translation simultaneous translation wait-k latency streaming end-to-end speech-to-text "
                "speech-to-speech cascaded st iwslt interpretation",
            ),
            _d(
                "Domain adaptation and terminology",
                "Adapting translation systems to specialised domains and constraining them to required terminology. "
                "It addresses the gap between general training data and the target domain.",
                "Fine-tuning or data selection for medical, legal or technical domains, lexically constrained decoding, "
                "terminology injection, translation memories and retrieval-augmented MT.",
                "Domain adaptation of models that do not translate (other fields).",
                "domain adaptation terminology constrained decoding lexical constraint translation memory "
                "in-domain out-of-domain fine-tuning medical legal domain-specific",
            ),
            _d(
                "Translation with large language models",
                "Using general-purpose large language models as translators. It studies prompting, in-context "
                "examples and fine-tuning of decoder-only LLMs for translation.",
                "Prompting or instruction-tuning LLMs for translation, few-shot example selection, comparing LLMs with "
                "dedicated NMT systems, LLM-based post-editing of translations.",
                "LLM papers that only mention translation as one of many tasks (the LLM fields).",
                "large language model llm gpt chatgpt prompting in-context learning few-shot translation "
                "instruction tuning decoder-only llm translation post-editing",
            ),
            _d(
                "Robustness and bias in MT",
                "How translation systems fail under noise, attack or social bias. It covers hallucinated translations, "
                "gender bias and sensitivity to perturbed input.",
                "Gender bias in translation, robustness to typos and noisy user text, adversarial attacks on NMT, "
                "hallucination and omission detection in translation output.",
                "Bias studies in monolingual models (alignment and safety field).",
                "robustness noise noisy input adversarial gender bias hallucination omission perturbation "
                "robust translation error analysis",
            ),
        ),
    ),
    FieldText(
        "multilingual-nlp",
        "Multilingual and cross-lingual NLP",
        "Language technology that works across many languages, or transfers what is learned in one language to "
        "others. The field is about languages beyond English: their models, data, evaluation and variation.",
        "multilingual cross-lingual languages language low-resource non-english typologically diverse xlm-r mbert "
        "transfer english-centric",
        (
            _d(
                "Multilingual pretrained models",
                "Building and analysing language models trained on many languages. It asks how shared representations "
                "form and how capacity is divided between languages.",
                "Training multilingual encoders or LLMs, the curse of multilinguality, language-specific capacity, "
                "analysis of how languages share a representation space.",
                "Models trained for one non-English language only (D2), tokenizer design alone (D5).",
                "multilingual pretrained model mbert xlm-r multilingual bert multilingual llm pretraining "
                "curse of multilinguality shared representation language-specific",
            ),
            _d(
                "Cross-lingual transfer",
                "Training on one language (usually English) and applying the model to others. It studies zero-shot and "
                "few-shot transfer and the factors that make it work.",
                "Zero-shot cross-lingual transfer, translate-train and translate-test, alignment of representations, "
                "choosing source languages, cross-lingual in-context learning.",
                "Translation systems themselves (machine translation field).",
                "cross-lingual transfer zero-shot cross-lingual transfer source language target language "
                "translate-train translate-test alignment few-shot transfer",
            ),
            _d(
                "Resources for under-resourced languages",
                "Creating corpora, datasets and models for languages with little digital data. It covers data "
                "collection, annotation and community-driven work.",
                "New corpora, treebanks, benchmarks or monolingual models for African, Indic, indigenous or other "
                "low-resource languages, data collection and annotation campaigns.",
                "Multilingual benchmarks spanning many languages mainly to test LLMs (D4).",
                "low-resource language corpus dataset resource african language indic language indigenous "
                "annotated corpus treebank native speaker data collection",
            ),
            _d(
                "Code-switching and mixed-language text",
                "Text or speech that alternates between languages within a conversation or sentence. It studies how "
                "to process, generate and evaluate such mixed input.",
                "Code-mixed sentiment or NER, code-switched language modelling and generation, transliterated text such "
                "as Romanised Hindi.",
                "Bilingual parallel data used for translation (machine translation field).",
                "code-switching code-mixing code-mixed code-switched hinglish transliteration romanized mixed language "
                "bilingual speaker",
            ),
            _d(
                "Multilingual evaluation of LLMs",
                "Benchmarks and studies that measure how well large language models work in languages other than "
                "English. It documents gaps between high- and low-resource languages.",
                "Multilingual benchmarks, evaluations of LLM performance across languages, multilingual instruction "
                "tuning, English-centric behaviour of LLMs.",
                "A dataset for a single language with no cross-language comparison (D2).",
                "multilingual benchmark multilingual evaluation llm across languages performance gap english-centric "
                "multilingual instruction tuning non-english language",
            ),
            _d(
                "Tokenization and scripts",
                "How text in many scripts and morphologies is segmented for models. It studies vocabulary allocation, "
                "tokenizer fairness and character- or byte-level models.",
                "Subword vocabularies across languages, tokenization parity and cost, byte-level and character-level "
                "models, morphology-aware segmentation, script conversion.",
                "Tokenization for English-only efficiency (efficient LLMs field).",
                "tokenization tokenizer subword vocabulary byte-level character-level script morphology segmentation "
                "morphologically rich fertility",
            ),
            _d(
                "Dialects and language varieties",
                "Processing regional, social and historical varieties of a language. It treats variation within a "
                "language rather than across languages.",
                "Arabic dialects, dialect identification, language identification, regional varieties, historical "
                "language stages, robustness of models to dialectal input.",
                "Standard-language resources (D2).",
                "dialect dialectal arabic dialect variety varieties language identification regional historical "
                "sociolinguistic non-standard",
            ),
            _d(
                "Culture and language",
                "Cultural knowledge and values expressed through language, and how models represent them. It asks "
                "whether models reflect the cultures of the people who speak each language.",
                "Cultural alignment of LLMs, culturally grounded benchmarks, region-specific knowledge, "
                "cross-cultural pragmatics.",
                "Social bias within one culture (alignment and safety field).",
                "culture cultural cultural awareness cultural values region country culturally grounded "
                "cross-cultural norm local knowledge",
            ),
        ),
    ),
    FieldText(
        "speech",
        "Speech and spoken language processing",
        "Processing spoken language: recognising, synthesising and understanding speech. The field covers acoustic "
        "and self-supervised speech models, speech-language models and their evaluation.",
        "speech spoken audio acoustic asr tts speaker utterance voice wav2vec whisper phoneme",
        (
            _d(
                "End-to-end speech recognition",
                "Models that map audio directly to text. It covers CTC, attention and transducer architectures and how "
                "they are trained and decoded.",
                "Conformer, CTC, RNN-T and attention-based ASR, decoding and language-model fusion, contextual biasing, "
                "ASR error correction.",
                "Self-supervised pretraining papers whose contribution is the representation (D1).",
                "automatic speech recognition asr end-to-end ctc transducer rnn-t conformer word error rate wer "
                "acoustic model decoding language model fusion contextual biasing",
            ),
            _d(
                "Self-supervised speech representations",
                "Learning speech representations from unlabelled audio. It studies pretraining objectives and what the "
                "learned representations encode.",
                "wav2vec 2.0, HuBERT, WavLM-style pretraining, probing speech representations, discrete speech units.",
                "Using a pretrained model only as a fixed feature extractor for another task (the task's direction).",
                "self-supervised speech representation wav2vec hubert wavlm pretraining unlabeled audio discrete units "
                "probing layer",
            ),
            _d(
                "Multilingual and low-resource ASR",
                "Speech recognition for many languages or for languages with little transcribed audio. It includes "
                "dialectal and accented speech.",
                "Multilingual ASR, cross-lingual transfer for speech, ASR for under-resourced languages and accents, "
                "speech corpora for new languages.",
                "Text-only multilingual work (multilingual NLP field).",
                "multilingual asr low-resource speech recognition accent accented speech dialect transcribed "
                "speech corpus languages cross-lingual speech",
            ),
            _d(
                "Speech synthesis and voice",
                "Generating speech from text or other speech. It includes text-to-speech, voice cloning and voice "
                "conversion.",
                "Neural TTS, zero-shot voice cloning, expressive and prosody-controlled synthesis, voice conversion, "
                "neural audio codecs for generation.",
                "Speech recognition (D0), spoken dialogue with LLMs (D6).",
                "text-to-speech tts speech synthesis voice cloning voice conversion prosody expressive vocoder "
                "audio codec naturalness mos",
            ),
            _d(
                "Spoken language understanding",
                "Extracting meaning from speech rather than transcripts alone. It covers intent detection, slot "
                "filling and spoken question answering.",
                "Spoken intent and slot tasks, end-to-end SLU, spoken QA, speech summarisation, paralinguistic tasks "
                "like emotion from speech.",
                "Text-only intent detection (dialogue field).",
                "spoken language understanding slu intent detection slot filling spoken question answering "
                "speech emotion recognition paralinguistic speech summarization",
            ),
            _d(
                "Speaker and paralinguistics",
                "Who is speaking and how, rather than what is said. It covers speaker identification, diarisation and "
                "detection of spoofed speech.",
                "Speaker verification and diarisation, anti-spoofing and deepfake audio detection, pathological or "
                "child speech assessment.",
                "Speech emotion used for understanding tasks (D4).",
                "speaker verification speaker diarization speaker identification spoofing deepfake audio "
                "pathological speech dysarthric child speech",
            ),
            _d(
                "Speech-language models",
                "Large models that take speech as input or produce it alongside text. It covers audio LLMs, spoken "
                "dialogue models and speech tokenisation for LLMs.",
                "Audio or speech LLMs, speech instruction following, full-duplex spoken dialogue, benchmarks for "
                "speech-capable LLMs.",
                "Classic ASR systems without a language-model backbone (D0).",
                "speech language model audio llm spoken llm speech llm speech tokens spoken dialogue speech instruction "
                "audio understanding large audio language model",
            ),
            _d(
                "Robust and efficient speech processing",
                "Making speech systems work in noise and on constrained devices. It covers noise robustness, streaming "
                "and model compression for speech.",
                "Speech enhancement for recognition, far-field and noisy ASR, streaming low-latency recognition, "
                "on-device and compressed speech models.",
                "General model compression without speech (efficient LLMs field).",
                "noise robust noisy speech enhancement far-field streaming low-latency on-device compression "
                "real-time efficient speech",
            ),
        ),
    ),
    FieldText(
        "speech-translation",
        "Speech translation",
        "Translating spoken language into text or speech in another language. The field sits where speech "
        "processing and machine translation meet, and covers model design, latency, data and evaluation of "
        "spoken-language translation.",
        "speech translation spoken translation speech-to-text translation speech-to-speech simultaneous "
        "interpretation st iwslt must-c source speech target language",
        (
            _d(
                "End-to-end speech translation models",
                "Single models that map source-language audio directly to target-language text. They are compared "
                "with pipelines and improved through pretraining, multitask learning and architecture choices.",
                "Direct ST encoders and decoders, joint ASR-ST multitask training, pretraining of the speech encoder "
                "for ST, modality-gap studies between speech and text.",
                "Pipelines with a separate ASR step (D1), systems that output speech (D3).",
                "end-to-end speech translation direct speech translation encoder decoder multitask modality gap "
                "speech encoder pretraining must-c",
            ),
            _d(
                "Cascaded speech translation",
                "Pipelines that first transcribe speech and then translate the transcript. The work targets error "
                "propagation between the recogniser and the translator.",
                "ASR-then-MT systems, robustness of MT to recognition errors, lattice or n-best passing, "
                "segmentation and punctuation of transcripts before translation.",
                "Single end-to-end models (D0).",
                "cascade cascaded asr mt pipeline error propagation transcript segmentation punctuation "
                "recognition errors",
            ),
            _d(
                "Simultaneous speech translation",
                "Translating while the speaker is still talking. It studies read-write policies and the trade-off "
                "between delay and quality.",
                "Wait-k and adaptive policies for speech input, streaming ST, latency metrics such as average "
                "lagging, re-translation strategies.",
                "Offline translation with no latency constraint (D0, D1).",
                "simultaneous speech translation streaming latency wait-k policy average lagging real-time "
                "incremental re-translation",
            ),
            _d(
                "Speech-to-speech translation",
                "Producing translated speech rather than text. It covers direct speech-to-speech models, discrete "
                "units and preserving the speaker's voice.",
                "Direct S2ST with spectrograms or discrete units, textless translation, voice and prosody "
                "preservation, expressive speech translation.",
                "Speech synthesis without translation (speech field).",
                "speech-to-speech translation s2st discrete units textless translatotron voice preservation "
                "expressive speech output",
            ),
            _d(
                "Data and low-resource speech translation",
                "Corpora for speech translation and methods for pairs with little data. It includes data "
                "augmentation and pseudo-labelling.",
                "New ST corpora, ST for under-resourced or unwritten languages, synthetic data from MT or TTS, "
                "knowledge distillation from MT.",
                "Text-only MT data (machine translation field).",
                "speech translation corpus dataset low-resource unwritten language data augmentation "
                "pseudo-labeling distillation covost",
            ),
            _d(
                "Multilingual speech translation",
                "Single systems translating speech between many languages. It covers massively multilingual speech "
                "foundation models with translation ability.",
                "Many-to-many ST, zero-shot speech translation directions, multilingual speech foundation models "
                "evaluated on ST.",
                "Multilingual ASR without translation (speech field).",
                "multilingual speech translation many-to-many zero-shot speech foundation model seamless whisper "
                "languages",
            ),
            _d(
                "Speech translation with LLMs",
                "Using large language models for spoken-language translation. It covers speech-LLM "
                "integration and prompting for ST.",
                "Speech encoders connected to LLMs for translation, instruction-following ST, LLM post-editing "
                "of ST output.",
                "LLMs for text translation (machine translation field).",
                "large language model llm speech llm speech translation instruction prompting adapter "
                "audio language model translation",
            ),
            _d(
                "Evaluation and shared tasks",
                "How speech translation is evaluated and benchmarked. It covers shared-task systems, metrics and "
                "human assessment of interpreting.",
                "IWSLT system papers, ST evaluation metrics and segmentation for scoring, comparisons with human "
                "interpreters.",
                "Evaluation of text MT only (machine translation field).",
                "iwslt shared task evaluation metric human interpreters interpreting submission system description "
                "bleu segmentation",
            ),
        ),
        breadth=0.04,
    ),
    FieldText(
        "question-answering",
        "Question answering and reading comprehension",
        "Systems that answer natural-language questions from text, tables, knowledge bases or their own knowledge. "
        "The field covers the datasets, reasoning steps and evaluation of question answering.",
        "question answering qa question answer reading comprehension questions answers squad benchmark",
        (
            _d(
                "Extractive reading comprehension",
                "Answering a question by selecting a span from a given passage. It covers span-extraction models and "
                "the datasets that test them.",
                "SQuAD-style span extraction, machine reading comprehension models, unanswerable questions, "
                "adversarial reading comprehension.",
                "Questions answered from a large corpus by first retrieving passages (D1).",
                "reading comprehension machine reading comprehension mrc span extraction squad passage extractive "
                "unanswerable question",
            ),
            _d(
                "Open-domain QA",
                "Answering questions without a given passage by retrieving evidence from a large corpus. It studies "
                "retriever-reader pipelines and closed-book answering.",
                "Retriever-reader systems, closed-book QA from model parameters, open-domain benchmarks such as Natural "
                "Questions and TriviaQA.",
                "Retrieval models evaluated without a QA task (retrieval field).",
                "open-domain question answering retriever reader natural questions triviaqa closed-book wikipedia "
                "evidence passages",
            ),
            _d(
                "Multi-hop and complex QA",
                "Questions that need several facts combined. It covers multi-hop reasoning, question decomposition and "
                "compositional questions.",
                "HotpotQA-style multi-hop QA, question decomposition, compositional and comparison questions, "
                "explanation chains for answers.",
                "Mathematical word problems (reasoning field).",
                "multi-hop question answering hotpotqa question decomposition compositional complex question "
                "reasoning chain bridge entity",
            ),
            _d(
                "Knowledge-base and table QA",
                "Answering questions over structured data. It covers semantic parsing into queries and reasoning over "
                "tables.",
                "KBQA, text-to-SQL, table question answering, hybrid table-text QA, numerical reasoning over tables.",
                "Unstructured-text QA (D0, D1).",
                "knowledge base question answering kbqa knowledge graph semantic parsing sparql text-to-sql sql table "
                "tabular hybrid table",
            ),
            _d(
                "Conversational QA",
                "Questions asked in a dialogue, where each depends on earlier turns. It covers question rewriting and "
                "clarification.",
                "CoQA/QuAC-style conversational QA, question rewriting, clarifying questions, information-seeking "
                "dialogue.",
                "Dialogue systems without a question-answering task (dialogue field).",
                "conversational question answering coqa quac follow-up question rewriting clarifying question "
                "information-seeking conversation history",
            ),
            _d(
                "Long-form and generative QA",
                "Answers that are free text, explanations or paragraphs rather than short spans. It covers how such "
                "answers are generated and judged.",
                "Long-form QA, explanatory answers, why and how questions, generative answer evaluation.",
                "Summarisation tasks without a question (summarisation field).",
                "long-form question answering generative answer explanation why question free-form answer eli5 "
                "answer generation",
            ),
            _d(
                "Domain-specific QA",
                "Question answering in specialised domains such as science, law or finance. It asks what domain "
                "knowledge and data a QA system needs.",
                "Scientific, legal, financial and educational QA datasets and systems, exam questions.",
                "Medical and clinical QA (biomedical field).",
                "scientific question answering legal financial domain-specific qa exam questions science textbook "
                "domain knowledge",
            ),
            _d(
                "QA datasets, robustness and evaluation",
                "How QA benchmarks are built and what they really measure. It studies annotation artefacts, shortcut "
                "learning and answer evaluation.",
                "New QA benchmarks and their analysis, dataset artefacts and shortcuts, robustness to paraphrased "
                "questions, evaluation of answer correctness.",
                "Benchmarks for LLM reasoning in general (reasoning field).",
                "qa dataset benchmark annotation artifacts shortcut robustness answer evaluation exact match "
                "question generation",
            ),
        ),
    ),
    FieldText(
        "retrieval-rag",
        "Information retrieval and retrieval-augmented generation",
        "Finding relevant documents for a query and using retrieved text to ground what a language model generates. "
        "The field covers retrievers, rankers, retrieval-augmented generation (RAG) and their evaluation.",
        "retrieval retriever retrieve document ranking search query passage rag retrieval-augmented generation "
        "information retrieval relevance corpus",
        (
            _d(
                "Dense retrieval",
                "Retrieval with learned vector embeddings of queries and documents. It covers bi-encoders, "
                "contrastive training and hard-negative mining.",
                "Dual-encoder retrievers, embedding models, contrastive and distillation training for retrieval, "
                "multi-vector late interaction.",
                "Lexical retrieval (D1), re-ranking of candidates (D2).",
                "dense retrieval dense retriever bi-encoder dual encoder embedding contrastive hard negative dpr "
                "colbert text embedding vector",
            ),
            _d(
                "Lexical and learned sparse retrieval",
                "Term-based retrieval, from BM25 to learned sparse representations. It studies term weighting and "
                "document or query expansion.",
                "BM25 baselines and variants, SPLADE-style sparse models, document expansion, query expansion and "
                "rewriting for search.",
                "Dense embeddings (D0).",
                "bm25 sparse retrieval lexical term weighting splade query expansion document expansion "
                "inverted index keyword",
            ),
            _d(
                "Neural re-ranking",
                "Re-ordering candidate documents with a stronger model. It covers cross-encoders and LLM rankers.",
                "Cross-encoder re-rankers, listwise and pairwise LLM ranking, ranking distillation.",
                "First-stage retrievers (D0, D1).",
                "reranking re-ranking reranker cross-encoder listwise pairwise ranking llm ranker monot5 "
                "passage ranking",
            ),
            _d(
                "Retrieval-augmented generation",
                "Language models that retrieve documents and condition their output on them. It covers RAG "
                "architectures, when to retrieve and how to use the evidence.",
                "RAG pipelines, adaptive and iterative retrieval, retrieval-augmented LMs, graph-based RAG, fusing "
                "retrieved passages into generation.",
                "Retrieval evaluated without generation (D0-D2).",
                "retrieval-augmented generation rag retrieval-augmented language model retrieved documents "
                "knowledge-intensive adaptive retrieval graph rag",
            ),
            _d(
                "Robustness and faithfulness of RAG",
                "How RAG systems behave with noisy, conflicting or adversarial retrieved content. It covers "
                "knowledge conflicts between context and parameters.",
                "Irrelevant or distracting context, context-memory conflicts, poisoning of retrieval corpora, "
                "faithfulness of answers to retrieved text.",
                "Hallucination without retrieval (factuality field).",
                "knowledge conflict noisy context irrelevant documents distracting robustness rag poisoning "
                "faithfulness to context counterfactual",
            ),
            _d(
                "Retrieval and RAG evaluation",
                "Benchmarks and metrics for retrieval and retrieval-augmented systems. It includes test collections "
                "and LLM-based relevance judgments.",
                "IR test collections, RAG benchmarks, relevance judgments by LLMs, evaluation of retrieval quality.",
                "QA benchmarks with no retrieval component (QA field).",
                "retrieval benchmark rag benchmark relevance judgment test collection beir evaluation retrieval "
                "mteb trec",
            ),
            _d(
                "Long context versus retrieval",
                "Whether and how long-context models replace retrieval, and how they use long inputs. It covers "
                "context compression for retrieved text.",
                "Long-context benchmarks for retrieval-style tasks, lost-in-the-middle effects, compression of "
                "retrieved context, chunking.",
                "Efficient attention mechanisms themselves (efficient LLMs field).",
                "long context long-context lost in the middle context compression chunking context window needle "
                "long input",
            ),
            _d(
                "Domain and conversational search",
                "Retrieval for specific domains and in interactive settings. It covers legal, scientific and "
                "e-commerce search and conversational search.",
                "Legal and patent retrieval, scientific literature search, product search, conversational and "
                "session search, recommendation with language models.",
                "Conversational QA without a retrieval model (QA field).",
                "legal retrieval scientific literature search product search e-commerce conversational search "
                "recommendation citation recommendation",
            ),
        ),
    ),
    FieldText(
        "llm-reasoning",
        "Reasoning in language models",
        "How language models solve problems that need several inferential steps: mathematics, logic, commonsense and "
        "planning. The field studies prompting, training and verification methods for reasoning and how to evaluate "
        "them.",
        "reasoning reason chain-of-thought step problem solving math logical llm inference steps",
        (
            _d(
                "Chain-of-thought prompting",
                "Eliciting intermediate reasoning steps from a model by prompting. It studies formats, "
                "demonstrations and when step-by-step reasoning helps.",
                "Chain-of-thought and its variants, least-to-most and decomposed prompting, analyses of why CoT works.",
                "Training methods that reward reasoning (D2).",
                "chain-of-thought cot prompting step-by-step rationale intermediate steps few-shot prompting "
                "decomposition least-to-most",
            ),
            _d(
                "Mathematical reasoning",
                "Solving mathematical problems in natural language. It covers word problems, competition "
                "mathematics and formal theorem proving.",
                "Math word problems, GSM8K/MATH-style benchmarks, tool-assisted calculation, formal proofs.",
                "General logical reasoning (D3).",
                "mathematical reasoning math word problem gsm8k arithmetic theorem proving mathematics numerical "
                "reasoning equation",
            ),
            _d(
                "Reinforcement learning and verifiers for reasoning",
                "Training models to reason better with rewards, verifiers and feedback on steps. It covers process and "
                "outcome supervision and RL from verifiable rewards.",
                "Process reward models, outcome verifiers, RL with verifiable rewards, self-training on generated "
                "rationales, long reasoning models.",
                "Preference alignment for harmlessness (alignment field).",
                "reward model process reward verifier reinforcement learning rl self-training rationale outcome "
                "supervision test-time scaling long reasoning",
            ),
            _d(
                "Logical and symbolic reasoning",
                "Deductive, inductive and abductive reasoning over explicit premises. It includes neuro-symbolic "
                "methods and formal logic benchmarks.",
                "Deduction over rules, natural-language inference as logic, solver-augmented reasoning, proof "
                "generation.",
                "Mathematics (D1), commonsense (D4).",
                "logical reasoning deductive inductive abductive symbolic neuro-symbolic logic rules premises proof "
                "solver",
            ),
            _d(
                "Commonsense and causal reasoning",
                "Everyday knowledge about the physical and social world, and reasoning about causes and effects. "
                "It covers commonsense benchmarks and knowledge resources.",
                "Commonsense QA, physical and social reasoning, causal and counterfactual reasoning, temporal reasoning.",
                "Factual knowledge recall (factuality field).",
                "commonsense reasoning commonsense knowledge causal reasoning counterfactual physical social "
                "temporal reasoning event",
            ),
            _d(
                "Planning and search with LLMs",
                "Using models to plan sequences of actions or to search over reasoning paths. It covers tree search and "
                "explicit planning.",
                "Tree-of-thoughts, Monte Carlo tree search over reasoning, planning benchmarks, search-augmented decoding.",
                "Agents acting in environments (agents field).",
                "planning plan search tree of thoughts monte carlo tree search mcts reasoning path exploration "
                "backtracking",
            ),
            _d(
                "Self-consistency and self-correction",
                "Improving answers by sampling, checking and revising them. It covers self-consistency, reflection and "
                "self-refinement.",
                "Majority voting over samples, self-verification, self-refine and critique loops, limits of "
                "self-correction.",
                "External reward models (D2).",
                "self-consistency self-correction self-refine reflection critique majority voting self-verification "
                "revise feedback",
            ),
            _d(
                "Faithfulness and evaluation of reasoning",
                "Whether stated reasoning reflects how a model reached its answer, and how reasoning is measured. It "
                "covers robustness of reasoning to perturbation.",
                "Faithfulness of rationales, reasoning benchmarks and contamination, brittleness to irrelevant "
                "information, overthinking and reasoning length.",
                "Interpretability of internal mechanisms not tied to reasoning (other fields).",
                "faithfulness reasoning evaluation benchmark robustness perturbation contamination overthinking "
                "reasoning length shortcut",
            ),
        ),
    ),
    FieldText(
        "llm-agents",
        "Language agents and tool use",
        "Language models that act: call tools, browse, write and run code, and cooperate with other agents to reach a "
        "goal. The field covers agent architectures, environments and benchmarks.",
        "agent agents tool environment action llm agent autonomous task interactive api multi-agent",
        (
            _d(
                "Tool use and function calling",
                "Models that call external tools or APIs as part of answering. It covers tool learning and "
                "function-calling formats.",
                "Toolformer-style tool learning, API calling, calculators and search as tools, tool-use benchmarks.",
                "Retrieval augmentation without a general tool interface (retrieval field).",
                "tool use tool learning function calling api calls external tools toolformer tool-augmented",
            ),
            _d(
                "Web and GUI agents",
                "Agents that operate websites, apps or operating systems. It covers navigation, grounding actions to "
                "interfaces and screen understanding.",
                "Web navigation, GUI and mobile agents, computer use, benchmarks such as WebShop and Mind2Web.",
                "Embodied robots (D5).",
                "web agent web navigation gui agent mobile app browser computer use webshop screen interface",
            ),
            _d(
                "Multi-agent systems",
                "Several model instances that debate, cooperate or compete. It covers role-playing agents and "
                "simulated societies.",
                "Multi-agent debate, role-based collaboration, agent societies and simulations, communication "
                "between agents.",
                "A single agent with tools (D0).",
                "multi-agent debate collaboration cooperation agents communicate role-playing society simulation "
                "generative agents",
            ),
            _d(
                "Agent reasoning, planning and memory",
                "How agents plan, remember and learn from experience over long tasks. It covers ReAct-style loops "
                "and memory architectures.",
                "Reasoning-acting loops, task decomposition for agents, long-term memory, reflection on trajectories.",
                "Planning without acting in an environment (reasoning field).",
                "react reasoning acting memory long-term memory reflection trajectory task decomposition agent "
                "planning experience",
            ),
            _d(
                "Code and software agents",
                "Models that write, execute and repair programs, including agents for software engineering. It covers "
                "code generation benchmarks and repository-level tasks.",
                "Code generation, program synthesis, code repair, SWE-bench-style agents, execution feedback.",
                "Mathematical reasoning with code only as a calculator (reasoning field).",
                "code generation program synthesis code llm software engineering bug repair repository execution "
                "humaneval programming",
            ),
            _d(
                "Embodied and game agents",
                "Language-guided agents in physical or simulated worlds and games. It covers instruction following "
                "for robots and text games.",
                "Vision-and-language navigation, language-conditioned robotics, text-based games, Minecraft-style "
                "environments.",
                "Web and GUI environments (D1).",
                "embodied robot robotics navigation instruction following text game minecraft simulated environment "
                "household",
            ),
            _d(
                "Agent benchmarks and evaluation",
                "Environments and metrics for measuring agent capability. It covers interactive benchmarks and "
                "evaluation of trajectories.",
                "Agent benchmarks, evaluation harnesses, success metrics, analyses of agent failures.",
                "Static QA benchmarks (QA field).",
                "agent benchmark evaluation environment success rate interactive benchmark agentbench failure analysis",
            ),
            _d(
                "Training language agents",
                "Fine-tuning or reinforcement learning to make models better agents. It covers trajectory data "
                "and agent-specific training signals.",
                "Agent instruction tuning on trajectories, RL for agents, self-improvement from environment feedback.",
                "Prompt-only agent pipelines (D3).",
                "agent tuning trajectories fine-tuning reinforcement learning environment feedback reward "
                "self-improvement agent training data",
            ),
        ),
    ),
    FieldText(
        "alignment-safety",
        "Alignment and safety of language models",
        "Making language models follow human intent and values while avoiding harm. The field covers instruction "
        "and preference tuning, attacks and defences, privacy and the detection of machine-written text.",
        "alignment safety harmful human preference rlhf jailbreak attack safe value instruction llm",
        (
            _d(
                "Preference optimisation and RLHF",
                "Training models from human or AI preference judgments. It covers reward modelling, RLHF and direct "
                "preference methods.",
                "Reward models, PPO-based RLHF, DPO and its variants, AI feedback, reward hacking.",
                "Rewards for reasoning correctness (reasoning field).",
                "rlhf reinforcement learning from human feedback preference optimization dpo reward model "
                "human preference ppo reward hacking",
            ),
            _d(
                "Instruction tuning",
                "Fine-tuning models on instructions and responses so they follow user requests. It covers data "
                "construction and selection for instruction tuning.",
                "Instruction datasets, self-instruct and synthetic instruction data, data selection and quality, "
                "multitask prompted training.",
                "Preference-based training (D0).",
                "instruction tuning instruction following instruction data self-instruct supervised fine-tuning "
                "sft multitask prompted data selection",
            ),
            _d(
                "Jailbreaks and red teaming",
                "Attacks that make aligned models produce harmful output, and the search for them. It covers "
                "adversarial prompts and automated red teaming.",
                "Jailbreak prompts, adversarial suffixes, prompt injection, red-teaming methods and defences "
                "against them.",
                "Backdoors planted in training data (D7).",
                "jailbreak red teaming adversarial prompt prompt injection attack defense harmful request "
                "guardrail refusal",
            ),
            _d(
                "Toxicity and harmful content",
                "Detecting and reducing toxic, hateful or otherwise harmful model output. It covers detoxification "
                "and safety classifiers.",
                "Toxicity detection and mitigation in generation, safety classifiers, harmful content benchmarks "
                "for LLMs.",
                "Hate-speech detection in social media text (sentiment and affect field).",
                "toxicity toxic detoxification harmful content safety classifier offensive output moderation "
                "harmlessness",
            ),
            _d(
                "Social bias and fairness",
                "Stereotypes and unequal treatment of social groups by language models. It covers measurement and "
                "mitigation of bias.",
                "Gender, racial and religious bias in models, bias benchmarks, debiasing methods, fairness of "
                "model decisions.",
                "Gender bias in translation (machine translation field).",
                "social bias fairness stereotype gender bias racial debiasing demographic group bias benchmark "
                "discrimination",
            ),
            _d(
                "Privacy and memorisation",
                "What models memorise from training data and how to protect it. It covers extraction attacks, "
                "differential privacy and unlearning.",
                "Training-data extraction, membership inference, differentially private training, machine unlearning.",
                "Watermarking of outputs (D6).",
                "privacy memorization differential privacy membership inference data extraction unlearning "
                "personal information pii",
            ),
            _d(
                "Machine-text detection and watermarking",
                "Telling model-written text from human text. It covers zero-shot and trained detectors and "
                "watermarks embedded at generation time.",
                "AI-generated text detection, watermarking schemes, their robustness to paraphrase, authorship "
                "of machine text.",
                "Fact-checking of content regardless of its author (factuality field).",
                "machine-generated text detection ai-generated text watermark watermarking detector human-written "
                "paraphrase attack authorship",
            ),
            _d(
                "Backdoors and adversarial robustness",
                "Hidden triggers planted through training data, and adversarial perturbation of inputs. It covers "
                "data poisoning and robustness certification for NLP models.",
                "Backdoor attacks and defences, data poisoning, adversarial examples for text classifiers, "
                "robustness evaluation.",
                "Jailbreak prompts against chat models (D2).",
                "backdoor poisoning trigger adversarial examples adversarial attack text classifier robustness "
                "perturbation certified",
            ),
        ),
    ),
    FieldText(
        "factuality",
        "Factuality, hallucination and fact-checking",
        "Whether what language models and texts say is true, and how to check it. The field covers hallucination, "
        "knowledge stored in models, uncertainty and automated verification of claims.",
        "factual factuality hallucination fact knowledge claim verification truthful uncertainty evidence",
        (
            _d(
                "Hallucination detection",
                "Identifying generated content that is unsupported or false. It covers detectors, benchmarks and "
                "taxonomies of hallucination.",
                "Hallucination benchmarks and detectors, self-checking by sampling, token-level hallucination labels.",
                "Methods that change the model to hallucinate less (D1).",
                "hallucination detection hallucinated content unsupported benchmark selfcheck detect "
                "hallucination taxonomy",
            ),
            _d(
                "Hallucination mitigation",
                "Reducing hallucination through decoding, training or grounding. It covers contrastive decoding and "
                "factuality-aware fine-tuning.",
                "Factuality-oriented decoding, fine-tuning for truthfulness, grounding in sources to avoid "
                "unsupported claims.",
                "Retrieval pipelines whose goal is not factuality (retrieval field).",
                "mitigate hallucination reduce hallucination decoding contrastive decoding truthful factuality "
                "fine-tuning grounded generation",
            ),
            _d(
                "Automated fact-checking",
                "Verifying claims against evidence. It covers claim detection, evidence retrieval and verdict "
                "prediction.",
                "FEVER-style claim verification, check-worthiness, scientific and political fact-checking, evidence "
                "retrieval for claims.",
                "Misinformation spread on social media without verification (D6).",
                "fact-checking fact verification claim verification fever evidence check-worthy claims verdict "
                "veracity",
            ),
            _d(
                "Knowledge editing",
                "Changing specific facts stored in a model without retraining it. It covers locate-and-edit methods "
                "and their side effects.",
                "Model editing methods, edit benchmarks, ripple effects and locality of edits.",
                "Probing what a model knows without changing it (D7).",
                "knowledge editing model editing edit facts locate-and-edit rome memit counterfactual update",
            ),
            _d(
                "Calibration and uncertainty",
                "Whether a model's confidence matches its accuracy. It covers uncertainty estimation and abstention.",
                "Calibration of LMs, verbalised confidence, semantic uncertainty, selective prediction and abstention.",
                "Calibration of speech or vision models (their fields).",
                "calibration uncertainty confidence uncertainty estimation abstention selective prediction "
                "overconfidence semantic entropy",
            ),
            _d(
                "Attribution and citation",
                "Linking generated statements to the sources that support them. It covers citation generation and "
                "attribution evaluation.",
                "Generating citations, attributed QA, evaluating whether cited sources support statements.",
                "Retrieval quality itself (retrieval field).",
                "attribution citation cite sources attributed supporting evidence verifiability citation generation",
            ),
            _d(
                "Misinformation and propaganda",
                "False or manipulative content spreading in media. It covers fake news, rumours and propaganda "
                "techniques.",
                "Fake news and rumour detection, propaganda and persuasion techniques, LLM-generated misinformation.",
                "Claim-level verification against evidence (D2).",
                "misinformation fake news rumor disinformation propaganda persuasion social media conspiracy",
            ),
            _d(
                "Knowledge in language models",
                "What factual knowledge models store and how it is recalled. It covers probing, knowledge "
                "acquisition and temporal drift of knowledge.",
                "Knowledge probing, LMs as knowledge bases, long-tail knowledge, outdated knowledge.",
                "Editing knowledge (D3).",
                "knowledge probing language models as knowledge bases factual knowledge long-tail entities recall "
                "temporal knowledge",
            ),
        ),
    ),
    FieldText(
        "summarization-generation",
        "Summarisation and text generation",
        "Producing fluent text for a purpose: condensing documents, verbalising data or writing creatively. The field "
        "covers generation methods, control, decoding and the evaluation of generated text.",
        "summarization summary generation text generation generate abstractive decoding fluency output",
        (
            _d(
                "News and abstractive summarisation",
                "Condensing single documents into short abstractive or extractive summaries. It covers the standard "
                "news benchmarks and summarisation models.",
                "Abstractive and extractive summarisers, CNN/DailyMail and XSum, faithfulness of summaries.",
                "Long or specialised documents (D2), dialogue (D1).",
                "abstractive summarization extractive summarization news summary cnn dailymail xsum summarizer",
            ),
            _d(
                "Dialogue and meeting summarisation",
                "Summarising conversations, meetings and multi-party chat. It handles speaker turns and informal "
                "language.",
                "Dialogue summarisation, meeting summarisation, chat and email thread summaries.",
                "Dialogue systems that reply rather than summarise (dialogue field).",
                "dialogue summarization meeting summarization conversation summary samsum chat email thread",
            ),
            _d(
                "Long-document and multi-document summarisation",
                "Summarising inputs too long for a single pass or spread over many documents. It covers scientific, "
                "legal and opinion summarisation.",
                "Long-document, multi-document, scientific paper, legal and review summarisation, query-focused "
                "summaries.",
                "Short news articles (D0).",
                "long document multi-document summarization scientific paper summarization query-focused review "
                "opinion summarization legal",
            ),
            _d(
                "Evaluating generated text",
                "Measuring the quality of generated text. It covers automatic metrics, human evaluation and LLMs as "
                "judges.",
                "Reference-based and reference-free metrics, LLM-as-a-judge, human evaluation design, meta-evaluation.",
                "Translation-specific metrics (machine translation field).",
                "evaluation metric rouge bertscore human evaluation llm-as-a-judge judge correlation nlg evaluation "
                "reference-free",
            ),
            _d(
                "Controllable generation and style",
                "Steering generated text towards attributes such as style, sentiment or format. It covers style "
                "transfer and constrained generation.",
                "Text style transfer, attribute control, paraphrase generation, text simplification, lexically "
                "constrained generation.",
                "Safety-driven detoxification (alignment field).",
                "controllable generation style transfer paraphrase generation text simplification attribute control "
                "constrained generation formality",
            ),
            _d(
                "Data-to-text and structured generation",
                "Producing text from tables, graphs or records. It covers faithfulness to the input data.",
                "Table-to-text, graph-to-text, AMR generation, report generation from records.",
                "Answering questions over tables (QA field).",
                "data-to-text table-to-text graph-to-text amr structured data webnlg records verbalization",
            ),
            _d(
                "Decoding and generation methods",
                "Algorithms that choose the output sequence from a model. It covers sampling, search and "
                "non-standard generation paradigms such as diffusion.",
                "Nucleus sampling, contrastive search, diversity, degeneration, diffusion language models, "
                "speculative methods for quality.",
                "Decoding for speed only (efficient LLMs field).",
                "decoding sampling nucleus beam search degeneration repetition diversity diffusion language model "
                "generation strategy",
            ),
            _d(
                "Story and creative writing",
                "Generating narratives, poetry and other creative text. It covers long-form coherence and "
                "human-AI co-writing.",
                "Story generation, poetry, creative writing assistants, narrative planning, humour generation.",
                "Factual long-form answers (QA field).",
                "story generation storytelling narrative creative writing poetry poem plot character co-writing",
            ),
        ),
    ),
    FieldText(
        "dialogue",
        "Dialogue and conversational systems",
        "Systems that hold conversations with people, to chat or to complete tasks. The field covers dialogue "
        "modelling, state tracking, grounding, evaluation and conversational assistants.",
        "dialogue dialog conversation conversational chatbot turn user response system utterance multi-turn",
        (
            _d(
                "Task-oriented dialogue",
                "Dialogue systems that help users complete tasks such as booking. It covers state tracking, policy "
                "and end-to-end task-oriented models.",
                "Dialogue state tracking, MultiWOZ-style systems, slot filling and intent detection in text, "
                "end-to-end task-oriented dialogue.",
                "Spoken intent detection (speech field).",
                "task-oriented dialogue dialogue state tracking dst multiwoz slot intent booking policy schema-guided",
            ),
            _d(
                "Open-domain response generation",
                "Chit-chat systems that generate engaging responses. It covers response generation models and their "
                "diversity and consistency.",
                "Open-domain response generation, dialogue pretraining, response diversity and coherence.",
                "Persona or emotion-specific dialogue (D2).",
                "open-domain dialogue response generation chit-chat chitchat dialogue model engaging coherent response "
                "diversity",
            ),
            _d(
                "Persona, empathy and emotional support",
                "Conversational agents with consistent personas or emotional understanding. It covers empathetic "
                "responses and support conversations.",
                "Persona-based dialogue, empathetic dialogue, emotional support conversation, counselling chat.",
                "Emotion classification of text without dialogue (sentiment and affect field).",
                "persona empathetic empathy emotional support counseling personality consistent persona "
                "character",
            ),
            _d(
                "Knowledge-grounded dialogue",
                "Dialogue grounded in documents or knowledge graphs. It covers knowledge selection and faithful "
                "responses.",
                "Wizard-of-Wikipedia-style grounding, knowledge selection, document-grounded conversation.",
                "Conversational QA over a passage (QA field).",
                "knowledge-grounded dialogue knowledge selection grounded response wizard of wikipedia "
                "document-grounded knowledge graph dialogue",
            ),
            _d(
                "Dialogue evaluation",
                "Judging conversational quality automatically or with people. It covers turn- and dialogue-level "
                "metrics.",
                "Dialogue evaluation metrics, human and LLM judges of conversations, interactive evaluation.",
                "General NLG metrics (summarisation and generation field).",
                "dialogue evaluation dialogue quality metric turn-level human judgment interactive evaluation "
                "conversation quality",
            ),
            _d(
                "Conversational recommendation and user simulation",
                "Dialogue systems that elicit preferences and recommend items, and simulators of users for training. "
                "It covers user modelling in conversation.",
                "Conversational recommender systems, user simulators, preference elicitation dialogue.",
                "Non-conversational recommendation (retrieval field).",
                "conversational recommendation recommender user simulator user simulation preference elicitation "
                "items",
            ),
            _d(
                "Multi-turn LLM assistants",
                "Behaviour of chat LLMs across many turns. It covers context tracking, consistency and multi-turn "
                "benchmarks.",
                "Multi-turn instruction following, long conversations, chat assistant behaviour, role-play chat.",
                "Single-turn instruction tuning (alignment field).",
                "multi-turn chat assistant chatgpt conversation llm chatbot role-play long conversation "
                "user interaction",
            ),
            _d(
                "Discourse and dialogue structure",
                "The structure of conversations: dialogue acts, discourse relations and turn-taking. It covers "
                "multi-party conversation analysis.",
                "Dialogue act classification, discourse parsing of conversations, turn-taking, multi-party chat "
                "disentanglement.",
                "Document-level discourse in translation (machine translation field).",
                "dialogue act discourse relation discourse parsing turn-taking multi-party disentanglement "
                "conversation structure",
            ),
        ),
    ),
    FieldText(
        "sentiment-affect",
        "Sentiment, emotion and social media analysis",
        "Recognising opinions, emotions and social attitudes expressed in text, largely from social media. The field "
        "covers sentiment and emotion analysis, stance, offensive language and mental-health signals.",
        "sentiment emotion opinion social media twitter tweets affective stance hate speech",
        (
            _d(
                "Aspect-based sentiment analysis",
                "Sentiment towards specific aspects or targets mentioned in text. It covers aspect extraction and "
                "polarity classification.",
                "Aspect term and category extraction, aspect polarity, sentiment triplets, review analysis.",
                "Document-level polarity without aspects (D7).",
                "aspect-based sentiment analysis absa aspect term polarity opinion triplet review aspect category",
            ),
            _d(
                "Emotion recognition in text",
                "Identifying emotions expressed in text or conversation. It covers fine-grained emotion taxonomies "
                "and emotion cause extraction.",
                "Emotion classification, emotion in conversation, emotion cause extraction, affect lexicons.",
                "Emotion from audio (speech field).",
                "emotion recognition emotion classification emotion detection emotion cause affect conversation "
                "anger joy",
            ),
            _d(
                "Multimodal sentiment",
                "Sentiment and emotion from text combined with audio, images or video. It covers fusion methods.",
                "Multimodal sentiment analysis, memes, video sentiment, multimodal emotion recognition.",
                "Text-only sentiment (D0, D7).",
                "multimodal sentiment analysis fusion video audio visual meme multimodal emotion modality",
            ),
            _d(
                "Stance and argument mining",
                "The position a text takes and the arguments it makes. It covers stance detection and argument "
                "structure.",
                "Stance detection, argument mining and quality, persuasion in debates, political stance.",
                "Propaganda and fake news (factuality field).",
                "stance detection argument mining argumentation argument quality debate political stance persuasive",
            ),
            _d(
                "Hate speech and offensive language",
                "Detecting abusive, hateful or offensive posts. It covers datasets, classifiers and bias in detection.",
                "Hate speech detection, offensive and abusive language, cyberbullying, counter-speech.",
                "Toxicity of model outputs (alignment field).",
                "hate speech offensive language abusive cyberbullying counter-speech misogyny detection social media",
            ),
            _d(
                "Sarcasm, humour and figurative language",
                "Non-literal language such as irony, sarcasm, metaphor and humour. It covers detection and "
                "interpretation.",
                "Sarcasm and irony detection, metaphor and idiom processing, humour recognition.",
                "Humour generation as creative writing (summarisation and generation field).",
                "sarcasm irony figurative language metaphor idiom humor humour non-literal",
            ),
            _d(
                "Mental health and wellbeing",
                "Signals of mental health in language. It covers depression and suicide-risk detection and "
                "supportive interventions.",
                "Depression, stress and suicidal ideation detection from posts, mental-health datasets, "
                "wellbeing analysis.",
                "Clinical notes in hospitals (biomedical field).",
                "mental health depression suicide suicidal stress anxiety wellbeing reddit posts psychological",
            ),
            _d(
                "Sentiment classification and computational social science",
                "Polarity of whole texts and the use of text to study society. It covers sentiment classifiers and "
                "large-scale social media analysis.",
                "Document and sentence sentiment, cross-lingual sentiment, opinion trends on social media, "
                "computational social science with LLMs.",
                "Aspect-level sentiment (D0).",
                "sentiment analysis sentiment classification polarity social media analysis computational social "
                "science public opinion tweets",
            ),
        ),
    ),
    FieldText(
        "information-extraction",
        "Information extraction",
        "Turning unstructured text into structured records: entities, relations, events and their links to knowledge "
        "bases. The field covers extraction models, supervision regimes and knowledge-graph construction.",
        "information extraction entity relation event extraction knowledge graph structured named entity",
        (
            _d(
                "Named entity recognition",
                "Finding and typing mentions of entities in text. It covers flat, nested and fine-grained NER.",
                "NER models and datasets, nested and discontinuous entities, fine-grained typing, cross-domain NER.",
                "Linking mentions to a knowledge base (D3).",
                "named entity recognition ner entity mention nested ner entity typing fine-grained sequence labeling",
            ),
            _d(
                "Relation extraction",
                "Identifying semantic relations between entities. It covers sentence- and document-level relation "
                "extraction and distant supervision.",
                "Relation classification, joint entity and relation extraction, document-level RE, distant supervision.",
                "Events with triggers and arguments (D2).",
                "relation extraction relation classification joint extraction triple distant supervision "
                "document-level relation entity pair",
            ),
            _d(
                "Event extraction",
                "Detecting events and their participants, time and place. It covers triggers, arguments and event "
                "relations.",
                "Event detection, argument extraction, event coreference, temporal and causal event relations.",
                "Entity relations (D1).",
                "event extraction event detection trigger argument extraction event argument event coreference "
                "temporal relation",
            ),
            _d(
                "Entity linking and coreference",
                "Connecting mentions to each other and to knowledge-base entries. It covers entity linking and "
                "coreference resolution.",
                "Entity linking and disambiguation, coreference resolution, cross-document coreference.",
                "Recognition of mentions only (D0).",
                "entity linking entity disambiguation coreference resolution coreference mention wikidata "
                "cross-document",
            ),
            _d(
                "Knowledge-graph construction and completion",
                "Building and completing knowledge graphs from text. It covers open IE, link prediction and "
                "text-enhanced KG embeddings.",
                "Open information extraction, KG completion and link prediction, taxonomy induction.",
                "Question answering over a KG (QA field).",
                "knowledge graph completion link prediction open information extraction openie triples kg embedding "
                "taxonomy",
            ),
            _d(
                "Generative and LLM-based extraction",
                "Casting extraction as text generation or prompting LLMs to extract. It covers unified generative IE.",
                "Seq2seq and unified IE, instruction-tuned extractors, prompting LLMs for NER and RE.",
                "Classic sequence labelling (D0).",
                "generative information extraction universal information extraction llm extraction prompting "
                "instruction tuning seq2seq structured output",
            ),
            _d(
                "Low-resource and few-shot extraction",
                "Extraction with little labelled data. It covers few-shot, zero-shot and weakly supervised IE.",
                "Few-shot NER and RE, weak and distant supervision, data augmentation for extraction.",
                "Domain-specific corpora (D7).",
                "few-shot zero-shot weak supervision low-resource annotation data augmentation prototype "
                "label noise",
            ),
            _d(
                "Domain-specific and document IE",
                "Extraction from specialised documents such as scientific papers, legal texts or forms. It covers "
                "document layout and domain schemas.",
                "Scientific IE, legal and financial extraction, visually rich documents, keyphrase extraction.",
                "Biomedical and clinical extraction (biomedical field).",
                "scientific information extraction keyphrase extraction legal financial document visually rich "
                "documents form key information",
            ),
        ),
    ),
    FieldText(
        "biomedical-clinical",
        "Biomedical and clinical NLP",
        "Language technology for medicine, biology and health care. The field covers clinical records, the "
        "biomedical literature, medical question answering and health applications of language models.",
        "biomedical clinical medical health patient medicine disease hospital healthcare biology",
        (
            _d(
                "Clinical notes and EHR",
                "Processing electronic health records and clinical notes. It covers coding, phenotyping and outcome "
                "prediction from notes.",
                "ICD coding, clinical concept extraction, de-identification, prediction from discharge summaries.",
                "Biomedical research papers (D1).",
                "clinical notes electronic health records ehr icd coding discharge summary mimic de-identification "
                "phenotyping",
            ),
            _d(
                "Biomedical literature mining",
                "Extracting knowledge from scientific biomedical text. It covers biomedical NER, relation extraction "
                "and literature search.",
                "BioNER, chemical and gene relations, PubMed mining, biomedical pretrained models.",
                "Clinical records (D0).",
                "biomedical literature pubmed biomedical named entity gene protein chemical drug interaction "
                "biobert",
            ),
            _d(
                "Medical QA and medical LLMs",
                "Answering medical questions and adapting LLMs to medicine. It covers licensing-exam benchmarks and "
                "medical assistants.",
                "MedQA-style benchmarks, medical LLMs and their evaluation, clinical decision support with LLMs.",
                "General QA (QA field).",
                "medical question answering medical llm medqa usmle clinical decision support medical knowledge "
                "doctor",
            ),
            _d(
                "Radiology and medical imaging reports",
                "Generating and understanding reports attached to medical images. It covers report generation and "
                "image-text models in radiology.",
                "Radiology report generation and summarisation, chest X-ray report models.",
                "General image captioning (vision-language field).",
                "radiology report generation chest x-ray radiology medical image report findings impression",
            ),
            _d(
                "Patient communication and health literacy",
                "Language between patients and health systems. It covers doctor-patient dialogue, simplification of "
                "medical text and patient questions.",
                "Medical dialogue, consultation summarisation, lay summaries, health questions from the public.",
                "Mental-health detection on social media (sentiment and affect field).",
                "patient doctor-patient medical dialogue consultation lay summary health literacy simplification "
                "patient questions",
            ),
            _d(
                "Public health and epidemiology",
                "Population health signals from text. It covers pandemic information, adverse drug events on social "
                "media and health misinformation.",
                "COVID-19 text analysis, pharmacovigilance from social media, vaccine discourse, health "
                "misinformation.",
                "Clinical records of individual patients (D0).",
                "covid-19 pandemic public health adverse drug event pharmacovigilance vaccine epidemiology "
                "health misinformation",
            ),
            _d(
                "Molecules, proteins and scientific language",
                "Language models applied to chemistry and biology sequences. It covers molecule-text models and "
                "protein language models.",
                "Molecule captioning, text-based molecule design, protein and genomic language models.",
                "Biomedical text mining of papers (D1).",
                "molecule molecular chemistry protein smiles drug discovery genomic sequence chemical",
            ),
            _d(
                "Clinical text classification and coding",
                "Assigning categories and codes to medical text. It covers diagnosis classification and "
                "clinical trial matching.",
                "Diagnosis prediction from text, clinical trial eligibility, medical coding systems, "
                "medical terminology normalisation.",
                "Extraction of biomedical entities from literature (D1).",
                "diagnosis classification clinical trial eligibility medical coding umls snomed normalization "
                "medical concept",
            ),
        ),
    ),
    FieldText(
        "vision-language",
        "Vision and language",
        "Models that connect images or video with natural language. The field covers multimodal pretraining, "
        "captioning, visual question answering, multimodal LLMs and document understanding.",
        "vision-language multimodal image visual video vision text-image caption picture",
        (
            _d(
                "Visual question answering",
                "Answering questions about images. It covers VQA datasets, grounding and visual reasoning.",
                "VQA models and benchmarks, visual reasoning, knowledge-based VQA.",
                "Chart and document images (D5).",
                "visual question answering vqa image question visual reasoning knowledge-based vqa gqa",
            ),
            _d(
                "Image and video captioning",
                "Describing images or videos in natural language. It covers captioning models and caption evaluation.",
                "Image captioning, dense and video captioning, caption metrics.",
                "Report generation from medical images (biomedical field).",
                "image captioning caption video captioning describe image dense captioning coco captions",
            ),
            _d(
                "Multimodal large language models",
                "LLMs extended with visual inputs. It covers architectures, instruction tuning and evaluation of "
                "vision-language assistants.",
                "LLaVA-style models, visual instruction tuning, multimodal benchmarks for LLMs.",
                "Contrastive image-text encoders without generation (D3).",
                "multimodal large language model mllm lvlm visual instruction tuning llava vision language model "
                "gpt-4v",
            ),
            _d(
                "Vision-language pretraining and grounding",
                "Learning joint image-text representations and grounding phrases to regions. It covers contrastive "
                "and fusion pretraining.",
                "CLIP-style pretraining, referring expressions, phrase grounding, image-text retrieval.",
                "Generative assistants (D2).",
                "vision-language pretraining clip contrastive image-text alignment grounding referring expression "
                "image-text retrieval",
            ),
            _d(
                "Video and temporal understanding",
                "Language tasks over video: moments, actions and events in time. It covers video QA and temporal "
                "grounding.",
                "Video QA, video-language models, temporal grounding of moments, video retrieval.",
                "Static images (D0, D1).",
                "video understanding video question answering video-language temporal grounding moment action clip",
            ),
            _d(
                "Documents, charts and text in images",
                "Understanding visually rich documents, charts and scene text. It covers OCR-free models and chart "
                "reasoning.",
                "Document VQA, chart and infographic QA, OCR and scene text, table images.",
                "Text-only document IE (information extraction field).",
                "document understanding chart infographic ocr scene text document image layout docvqa",
            ),
            _d(
                "Multimodal hallucination and robustness",
                "Errors of vision-language models such as describing objects that are not present. It covers "
                "evaluation and mitigation.",
                "Object hallucination, visual faithfulness benchmarks, adversarial multimodal attacks.",
                "Text-only hallucination (factuality field).",
                "object hallucination multimodal hallucination visual faithfulness lvlm hallucination robustness "
                "adversarial image",
            ),
            _d(
                "Text-to-image and multimodal generation",
                "Generating images or other media from text, and evaluating alignment between prompt and output. It "
                "covers prompt design for generators.",
                "Text-to-image models and evaluation, prompt engineering for image generation, multimodal generation.",
                "Image captioning (D1).",
                "text-to-image generation diffusion image generation prompt stable diffusion generated images "
                "synthesis",
            ),
        ),
    ),
    FieldText(
        "efficient-llms",
        "Efficient language models",
        "Making language models cheaper to train, adapt and run. The field covers compression, parameter-efficient "
        "fine-tuning, efficient architectures and faster inference.",
        "efficient efficiency compression inference memory latency parameters speed cost fine-tuning compute",
        (
            _d(
                "Quantisation",
                "Representing weights and activations with fewer bits. It covers post-training and "
                "quantisation-aware methods for LLMs.",
                "Weight and activation quantisation, low-bit LLMs, outlier handling, KV-cache quantisation.",
                "Pruning (D1).",
                "quantization low-bit 4-bit 8-bit int8 post-training quantization weight quantization outliers "
                "bits",
            ),
            _d(
                "Pruning and sparsity",
                "Removing parameters or structures from a model. It covers unstructured and structured pruning.",
                "Magnitude and structured pruning of LMs, sparse models, layer dropping.",
                "Mixture-of-experts sparsity (D4).",
                "pruning sparsity sparse structured pruning unstructured prune layer dropping",
            ),
            _d(
                "Knowledge distillation",
                "Training small models to imitate large ones. It covers logit and sequence-level distillation.",
                "Distilling LMs into smaller students, distillation from LLM outputs for compact models.",
                "Distillation for translation quality only (machine translation field).",
                "knowledge distillation teacher student distill smaller model compact model",
            ),
            _d(
                "Parameter-efficient fine-tuning",
                "Adapting large models by training a small number of parameters. It covers adapters, LoRA and prompt "
                "tuning.",
                "LoRA and its variants, adapters, prefix and prompt tuning, model merging.",
                "Full fine-tuning recipes for alignment (alignment field).",
                "parameter-efficient fine-tuning peft lora adapter prefix tuning prompt tuning low-rank model merging",
            ),
            _d(
                "Efficient architectures and mixture of experts",
                "Model architectures that reduce computation. It covers efficient attention, state-space models and "
                "mixture of experts.",
                "Linear and sparse attention, state-space and recurrent models, MoE routing.",
                "Long-context usage studies (retrieval field).",
                "efficient attention linear attention mixture of experts moe state space model mamba recurrent "
                "routing",
            ),
            _d(
                "Fast inference and serving",
                "Reducing latency and memory when generating. It covers speculative decoding, KV-cache management and "
                "early exit.",
                "Speculative decoding, KV-cache compression and eviction, early exit, batching and serving systems.",
                "Decoding for output quality (summarisation and generation field).",
                "speculative decoding kv cache inference acceleration early exit latency throughput serving speedup",
            ),
            _d(
                "Efficient and data-efficient training",
                "Training models with less compute or data. It covers data pruning, curriculum and scaling laws.",
                "Scaling laws, compute-optimal training, data selection for pretraining, small language models.",
                "Instruction-data selection for alignment (alignment field).",
                "scaling law compute-optimal pretraining efficient training small language model data efficiency "
                "tokens budget",
            ),
            _d(
                "Long-context extension",
                "Extending the context length models can handle. It covers position encodings and context "
                "extension methods.",
                "Positional encoding extrapolation, RoPE scaling, length generalisation, context-window extension.",
                "Retrieval versus long context (retrieval field).",
                "long context position encoding rope length extrapolation context window extension positional",
            ),
        ),
    ),
)


def field_ids() -> list[str]:
    return [f.field_id for f in FIELDS]
